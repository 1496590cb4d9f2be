package kopa.neo4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.connectors.ConnectorPortRegister;
import org.neo4j.configuration.connectors.ConnectorType;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

/**
 * Starts Neo4j community embedded with the Bolt and HTTP connectors on loopback, prints one readiness line
 * ("NEO4J_READY pid=PID bolt=PORT http=PORT", PID being this process, so a caller can tell it from a line an
 * earlier run left behind) and blocks until SIGTERM/SIGINT, then shuts the DBMS down cleanly.
 *
 * Neo4j Browser may fetch remote content (`:style URL`, `:play URL`) only from the hosts in
 * browser.remote_content_hostname_whitelist (the 5.26 spelling; Browser 5 reads exactly this key from
 * dbms.clientConfig). Neo4j's default, "guides.neo4j.com,localhost", leaves out 127.0.0.1, where `kopa serve` listens
 * by default; KOPA_NEO4J_BROWSER_ALLOWLIST (comma-separated host names) replaces the list below.
 *
 * Nothing phones home (docs/operations.md, "Data sovereignty / telemetry"): no usage report from the DBMS
 * (dbms.usage_report.enabled), no product analytics or crash reports from Browser (client.allow_telemetry, which
 * Browser reads from dbms.clientConfig), no driver telemetry collected (server.bolt.telemetry.enabled), and a
 * Content-Security-Policy on the Browser's pages that lets them load scripts, styles and fonts only from this server
 * and connect only to it, to Bolt (ws:, wss:) and to the allow-listed hosts. Browser 5.24 in Community Edition loads
 * Segment and Canny scripts and Google Fonts, and sends Sentry performance traces, whatever client.allow_telemetry
 * says; Neo4j's default policy allows all of that (connect-src ... http: https:). browser.allow_outgoing_connections
 * is not set: Community 5.26 does not declare it (strict config validation refuses to start) and its Browser ignores
 * it (honoured on Enterprise only).
 *
 * Usage: java -cp ... kopa.neo4j.Launcher HOME_DIR BOLT_PORT HTTP_PORT [PAGECACHE]
 */
public final class Launcher {
    private Launcher() {}

    static final String BROWSER_ALLOWLIST = "guides.neo4j.com,localhost,127.0.0.1";

    /** Browser's Content-Security-Policy; %1$s: the allow-listed hosts (" host:*" each), where Browser may fetch from. */
    static final String BROWSER_CSP = "default-src 'self'; script-src 'self'; img-src 'self' data:%1$s; "
            + "style-src 'self' 'unsafe-inline'; font-src 'self'; base-uri 'none'; object-src 'none'; "
            + "frame-ancestors 'none'; connect-src 'self' ws: wss:%1$s";

    /** The policy for an allow-list: each host on any port ("*", any host, gives http: https:). */
    static String browserCsp(String allowlist) {
        StringBuilder hosts = new StringBuilder();
        for (String host : allowlist.split(",")) {
            host = host.strip();
            if (!host.isEmpty()) {
                hosts.append(' ').append(host.equals("*") ? "http: https:" : host + ":*");
            }
        }
        return String.format(BROWSER_CSP, hosts);
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: Launcher HOME_DIR BOLT_PORT HTTP_PORT [PAGECACHE]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        String bolt = args[1];
        String http = args[2];
        String pagecache = args.length > 3 ? args[3] : "256m";

        Map<String, String> cfg = new LinkedHashMap<>();
        cfg.put("dbms.security.auth_enabled", "false");
        cfg.put("server.bolt.enabled", "true");
        cfg.put("server.bolt.listen_address", "127.0.0.1:" + bolt);
        cfg.put("server.bolt.advertised_address", "127.0.0.1:" + bolt);
        cfg.put("server.http.enabled", "true");
        cfg.put("server.http.listen_address", "127.0.0.1:" + http);
        cfg.put("server.http.advertised_address", "127.0.0.1:" + http);
        cfg.put("server.https.enabled", "false");
        cfg.put("server.memory.pagecache.size", pagecache);
        cfg.put("dbms.memory.transaction.total.max", "1g");
        cfg.put("db.transaction.timeout", "120s");
        cfg.put("db.tx_log.preallocate", "false");
        // nothing phones home (see the class comment)
        cfg.put("dbms.usage_report.enabled", "false");
        cfg.put("client.allow_telemetry", "false");
        cfg.put("server.bolt.telemetry.enabled", "false");
        String allow = System.getenv("KOPA_NEO4J_BROWSER_ALLOWLIST");
        String hosts = allow == null || allow.isBlank() ? BROWSER_ALLOWLIST : allow.replaceAll("\\s+", "");
        cfg.put("browser.remote_content_hostname_whitelist", hosts);
        cfg.put("dbms.security.http_static_content_security_policy_header", browserCsp(hosts));

        Files.createDirectories(home);
        StringBuilder conf = new StringBuilder();
        cfg.forEach((k, v) -> conf.append(k).append('=').append(v).append('\n'));
        Path confFile = home.resolve("neo4j.conf");
        Files.writeString(confFile, conf.toString());
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home).loadPropertiesFromFile(confFile).build();
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("NEO4J_STOPPING");
            dbms.shutdown();
            stop.countDown();
        }));

        GraphDatabaseAPI api = (GraphDatabaseAPI) dbms.database("system");
        ConnectorPortRegister reg = api.getDependencyResolver().resolveDependency(ConnectorPortRegister.class);
        int boltPort = reg.getLocalAddress(ConnectorType.BOLT).getPort();
        int httpPort = reg.getLocalAddress(ConnectorType.HTTP) != null ? reg.getLocalAddress(ConnectorType.HTTP).getPort() : -1;
        // Make sure the default database is up before we announce readiness.
        dbms.database("neo4j").executeTransactionally("RETURN 1");
        System.out.println("NEO4J_READY pid=" + ProcessHandle.current().pid() + " bolt=" + boltPort + " http=" + httpPort);
        System.out.flush();
        stop.await();
    }
}
