# KOPA EDGE: one image, the process is chosen by the command (api | worker | sandbox | demo).
#   docker build -t kopa-edge .
#   docker run --rm -p 8000:8000 -e KOPA_STORE=neo4j -e KOPA_NEO4J__URI=bolt://neo4j:7687 kopa-edge serve --host 0.0.0.0
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY core core
COPY sandbox sandbox
COPY api api
COPY graph graph
COPY workers workers
COPY training training
COPY bench bench
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 kopa
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER kopa
WORKDIR /home/kopa
ENV KOPA_DATA_DIR=/home/kopa/data
EXPOSE 8000 8090
ENTRYPOINT ["kopa"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
