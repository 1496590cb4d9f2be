{{/*
Names and labels. Every object carries the app.kubernetes.io/* recommended labels; selectors use name,
instance and component only (they are immutable on Deployments).
*/}}

{{- define "kopa-edge.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified release name, kept short enough for the "-worker-verification" suffix (63 characters).
*/}}
{{- define "kopa-edge.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "kopa-edge.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kopa-edge.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kopa-edge.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "kopa-edge.labels" -}}
helm.sh/chart: {{ include "kopa-edge.chart" . }}
{{ include "kopa-edge.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kopa-edge
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Component helpers take a dict: (dict "root" $ "component" "api").
*/}}
{{- define "kopa-edge.componentSelectorLabels" -}}
{{ include "kopa-edge.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "kopa-edge.componentLabels" -}}
{{ include "kopa-edge.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "kopa-edge.componentName" -}}
{{- printf "%s-%s" (include "kopa-edge.fullname" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kopa-edge.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kopa-edge.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "kopa-edge.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
The plain settings, as a YAML map of KOPA_* variables: the ConfigMap's data and the hook Job's env (the hook
runs before the ConfigMap exists on a first install).
*/}}
{{- define "kopa-edge.configData" -}}
{{- $hosts := list }}
{{- range .Values.config.allowedHosts }}
{{- $hosts = append $hosts (tpl . $) }}
{{- end }}
KOPA_ENV: {{ .Values.config.env | quote }}
KOPA_STORE: {{ .Values.config.store | quote }}
KOPA_DATA_DIR: {{ .Values.config.dataDir | quote }}
KOPA_LOG_LEVEL: {{ .Values.config.logLevel | quote }}
KOPA_LOG_JSON: {{ .Values.config.logJson | toString | quote }}
KOPA_ALLOWED_HOSTS: {{ toJson $hosts | quote }}
KOPA_UPSTREAM_OVERRIDES: {{ tpl .Values.config.upstreamOverrides . | quote }}
KOPA_NEO4J__URI: {{ .Values.neo4j.uri | quote }}
KOPA_NEO4J__USER: {{ .Values.neo4j.user | quote }}
KOPA_NEO4J__DATABASE: {{ .Values.neo4j.database | quote }}
{{- with .Values.neo4j.browserUrl }}
KOPA_NEO4J__BROWSER_URL: {{ . | quote }}
{{- end }}
KOPA_REDIS_URL: {{ .Values.redis.url | quote }}
{{- with .Values.config.batches }}
KOPA_BATCHES__TEAM_DAILY_CALLS: {{ .teamDailyCalls | int64 | toString | quote }}
KOPA_BATCHES__TEAM_BUDGETS: {{ .teamBudgets | quote }}
KOPA_BATCHES__SHARED_POOL: {{ .sharedPool | quote }}
KOPA_BATCHES__ITEM_STREAMS_PER_TOKEN: {{ .itemStreamsPerToken | int64 | toString | quote }}
{{- end }}
{{- range $k, $v := .Values.config.extra }}
{{ $k }}: {{ $v | toString | quote }}
{{- end }}
{{- end }}

{{/*
Host and port of a URL such as redis://host:6379/0, with a default port.
Call: (include "kopa-edge.urlPort" (dict "url" .Values.redis.url "default" 6379))
*/}}
{{- define "kopa-edge.urlHostPort" -}}
{{- $u := urlParse .url }}
{{- $parts := splitList ":" $u.host }}
{{- if eq (len $parts) 2 }}
{{- $u.host }}
{{- else }}
{{- printf "%s:%v" $u.host .default }}
{{- end }}
{{- end }}

{{- define "kopa-edge.urlPort" -}}
{{- include "kopa-edge.urlHostPort" . | splitList ":" | last }}
{{- end }}

{{- define "kopa-edge.neo4jPort" -}}
{{- if .Values.networkPolicy.neo4j.port }}
{{- .Values.networkPolicy.neo4j.port }}
{{- else }}
{{- include "kopa-edge.urlPort" (dict "url" .Values.neo4j.uri "default" 7687) }}
{{- end }}
{{- end }}

{{- define "kopa-edge.redisPort" -}}
{{- if .Values.networkPolicy.redis.port }}
{{- .Values.networkPolicy.redis.port }}
{{- else }}
{{- include "kopa-edge.urlPort" (dict "url" .Values.redis.url "default" 6379) }}
{{- end }}
{{- end }}

{{/*
Environment from Secrets (references only). Kubernetes expands $(REDIS_PASSWORD) in the KOPA_REDIS_URL that
follows it; that entry overrides the password-free URL of the ConfigMap.
*/}}
{{- define "kopa-edge.storeSecretEnv" -}}
{{- if .Values.neo4j.existingSecret }}
- name: KOPA_NEO4J__PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .Values.neo4j.existingSecret | quote }}
      key: {{ .Values.neo4j.passwordKey | quote }}
{{- end }}
{{- if .Values.redis.existingSecret }}
{{- $u := urlParse .Values.redis.url }}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.existingSecret | quote }}
      key: {{ .Values.redis.passwordKey | quote }}
- name: KOPA_REDIS_URL
  value: {{ printf "%s://%s:$(REDIS_PASSWORD)@%s%s" $u.scheme .Values.redis.username $u.host $u.path | quote }}
{{- end }}
{{- end }}

{{- define "kopa-edge.serviceKeyEnv" -}}
{{- $s := .Values.secrets.serviceKeys }}
{{- if $s.existingSecret }}
{{- range $s.items }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ $s.existingSecret | quote }}
      key: {{ .key | quote }}
{{- end }}
{{- end }}
{{- end }}

{{- define "kopa-edge.bootstrapTokenEnv" -}}
{{- with .Values.secrets.bootstrapToken }}
{{- if .existingSecret }}
- name: KOPA_BOOTSTRAP_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ .existingSecret | quote }}
      key: {{ .key | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Pod-level pieces shared by every workload.
*/}}
{{- define "kopa-edge.podCommon" -}}
serviceAccountName: {{ include "kopa-edge.serviceAccountName" . }}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}

{{- define "kopa-edge.volumes" -}}
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: {{ .Values.scratch.tmpSizeLimit }}
  - name: data
    emptyDir:
      sizeLimit: {{ .Values.scratch.dataSizeLimit }}
{{- end }}

{{- define "kopa-edge.volumeMounts" -}}
volumeMounts:
  - name: tmp
    mountPath: /tmp
  - name: data
    mountPath: {{ .Values.config.dataDir }}
{{- end }}

{{/*
Scheduling: the component's own nodeSelector/tolerations/affinity, else the chart-wide ones.
Call: (include "kopa-edge.scheduling" (dict "root" $ "c" .Values.api))
*/}}
{{- define "kopa-edge.scheduling" -}}
{{- with (default .root.Values.nodeSelector .c.nodeSelector) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default .root.Values.tolerations .c.tolerations) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default .root.Values.affinity .c.affinity) }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .c.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
Pod template annotations: roll the pods when the settings change.
*/}}
{{- define "kopa-edge.podAnnotations" -}}
checksum/config: {{ include "kopa-edge.configData" .root | sha256sum }}
{{- with .c.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
A PodDisruptionBudget body. Call: (dict "root" $ "component" "api" "pdb" .Values.api.pdb)
*/}}
{{- define "kopa-edge.pdb" -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "kopa-edge.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "kopa-edge.componentLabels" . | nindent 4 }}
spec:
  {{- if not (kindIs "string" .pdb.minAvailable) }}
  minAvailable: {{ .pdb.minAvailable }}
  {{- else if .pdb.minAvailable }}
  minAvailable: {{ .pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ .pdb.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "kopa-edge.componentSelectorLabels" . | nindent 6 }}
{{- end }}

{{/*
A HorizontalPodAutoscaler body. Call: (dict "root" $ "component" "api" "kind" "Deployment" "hpa" .Values.api.autoscaling)
*/}}
{{- define "kopa-edge.hpa" -}}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "kopa-edge.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "kopa-edge.componentLabels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "kopa-edge.componentName" . }}
  minReplicas: {{ .hpa.minReplicas }}
  maxReplicas: {{ .hpa.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ .hpa.targetCPUUtilizationPercentage }}
    {{- if .hpa.targetMemoryUtilizationPercentage }}
    - type: Resource
      resource:
        name: memory
        target:
          type: Utilization
          averageUtilization: {{ .hpa.targetMemoryUtilizationPercentage }}
    {{- end }}
{{- end }}

{{/*
A container's env list from the named helpers plus extraEnv; nothing at all when every part is empty.
Call: (dict "root" $ "helpers" (list "kopa-edge.storeSecretEnv") "extra" .Values.api.extraEnv)
*/}}
{{- define "kopa-edge.containerEnv" -}}
{{- $out := list }}
{{- range .helpers }}
{{- $s := include . $.root | trim }}
{{- if $s }}
{{- $out = append $out $s }}
{{- end }}
{{- end }}
{{- with .extra }}
{{- $out = append $out (toYaml . | trim) }}
{{- end }}
{{- if $out }}
env:
  {{- join "\n" $out | nindent 2 }}
{{- end }}
{{- end }}

{{/*
"autoscaled" or "xN" for NOTES.txt. Call with a workers.<kind> map.
*/}}
{{- define "kopa-edge.notesScale" -}}
{{- if or .autoscaling.enabled .keda.enabled }}autoscaled{{ else }}x{{ .replicas }}{{ end }}
{{- end }}
