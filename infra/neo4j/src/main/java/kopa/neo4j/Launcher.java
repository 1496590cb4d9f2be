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
 * Usage: java -cp ... kopa.neo4j.Launcher HOME_DIR BOLT_PORT HTTP_PORT [PAGECACHE]
 */
public final class Launcher {
    private Launcher() {}

    static final String BROWSER_ALLOWLIST = "guides.neo4j.com,localhost,127.0.0.1";

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
        cfg.put("dbms.usage_report.enabled", "false");
        String allow = System.getenv("KOPA_NEO4J_BROWSER_ALLOWLIST");
        cfg.put("browser.remote_content_hostname_whitelist",
                allow == null || allow.isBlank() ? BROWSER_ALLOWLIST : allow.replaceAll("\\s+", ""));

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
