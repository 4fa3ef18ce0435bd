package dev.leadjobs.es;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.node.ClasspathNode;
import org.elasticsearch.node.InternalSettingsPreparer;
import org.elasticsearch.node.Node;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.transport.netty4.Netty4Plugin;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Starts a single-node Elasticsearch server in this JVM and keeps it running until SIGTERM/SIGINT.
 *
 * <p>Configuration (system property, else environment variable, else default):
 * <ul>
 *   <li>{@code es.home} / {@code ES_HOME}: path.home (required); config/ and logs/ live below it</li>
 *   <li>{@code es.data} / {@code ES_DATA}: path.data (default: {@code <home>/data})</li>
 *   <li>{@code es.http.port} / {@code ES_PORT}: HTTP port (default 9200)</li>
 *   <li>{@code es.transport.port} / {@code ES_TRANSPORT_PORT}: transport port (default 9300)</li>
 *   <li>{@code es.host} / {@code ES_HOST}: bind/publish host (default 127.0.0.1)</li>
 *   <li>{@code es.cluster.name} / {@code ES_CLUSTER_NAME}: default "leadjobs-dev"</li>
 *   <li>{@code es.node.name} / {@code ES_NODE_NAME}: default "node-1"</li>
 * </ul>
 * Heap and other JVM flags are set by the caller (es.sh).
 */
public final class Launcher {
    private Launcher() {
    }

    static String config(String property, String env, String defaultValue) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) value = System.getenv(env);
        if (value == null || value.isBlank()) value = defaultValue;
        return value;
    }

    public static void main(String[] args) throws Exception {
        String home = config("es.home", "ES_HOME", null);
        if (home == null) {
            System.err.println("es-launcher: es.home (or ES_HOME) is required");
            System.exit(2);
        }
        Path homeDir = Path.of(home).toAbsolutePath().normalize();
        Path dataDir = Path.of(config("es.data", "ES_DATA", homeDir.resolve("data").toString())).toAbsolutePath().normalize();
        Path configDir = homeDir.resolve("config");
        Path logsDir = homeDir.resolve("logs");
        Files.createDirectories(configDir);
        Files.createDirectories(logsDir);
        Files.createDirectories(dataDir);
        Files.createDirectories(homeDir.resolve("plugins"));
        Files.createDirectories(homeDir.resolve("modules"));
        // The distribution ships native helpers (libvec, libzstd) in lib/platform/<os-arch>; Maven Central does not.
        // Point the loader at an existing (empty) directory so that it fails cleanly with UnsatisfiedLinkError and
        // NativeAccess falls back to its no-op/pure-Java implementations (no mlock, zstd via heap fallback, ...).
        if (System.getProperty("es.nativelibs.path") == null) {
            Path nativeLibs = homeDir.resolve("lib").resolve("platform").resolve("linux-x64");
            Files.createDirectories(nativeLibs);
            System.setProperty("es.nativelibs.path", nativeLibs.toString());
        }

        String host = config("es.host", "ES_HOST", "127.0.0.1");
        int httpPort = Integer.parseInt(config("es.http.port", "ES_PORT", "9200"));
        int transportPort = Integer.parseInt(config("es.transport.port", "ES_TRANSPORT_PORT", "9300"));
        String clusterName = config("es.cluster.name", "ES_CLUSTER_NAME", "leadjobs-dev");
        String nodeName = config("es.node.name", "ES_NODE_NAME", "node-1");

        // log4j is configured by log4j2.properties on the classpath (console, INFO);
        // this installs Elasticsearch's own logging bridges on top of it.
        LogConfigurator.configureESLogging();
        LogConfigurator.setClusterName(clusterName);
        LogConfigurator.setNodeName(nodeName);
        Logger logger = LogManager.getLogger(Launcher.class);

        Settings settings = Settings.builder()
            .put("path.home", homeDir.toString())
            .put("path.data", dataDir.toString())
            .put("path.logs", logsDir.toString())
            .put("cluster.name", clusterName)
            .put("node.name", nodeName)
            .put("network.host", host)
            .put("http.port", httpPort)
            .put("transport.port", transportPort)
            .put("discovery.type", "single-node")
            // the real-memory breaker relies on JVM tuning that the distribution's jvm.options provide
            .put("indices.breaker.total.use_real_memory", false)
            // dev machines may have nearly full disks: never go read-only because of watermarks
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .build();

        Environment environment = InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), configDir, () -> nodeName);

        Map<String, Class<? extends Plugin>> modules = new LinkedHashMap<>();
        modules.put("transport-netty4", Netty4Plugin.class);

        long started = System.nanoTime();
        Node node;
        try {
            node = new ClasspathNode(environment, modules);
        } catch (Throwable t) {
            fail(logger, "failed to build the node", t);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        AtomicBoolean closing = new AtomicBoolean();
        Runnable close = () -> {
            if (!closing.compareAndSet(false, true)) return;
            try {
                node.prepareForClose();
                node.close();
                if (!node.awaitClose(20, TimeUnit.SECONDS)) logger.warn("node did not close within 20s");
                logger.info("node closed");
            } catch (Exception e) {
                logger.error("error while closing node", e);
            } finally {
                stopped.countDown();
            }
        };
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (!closing.get()) logger.info("shutdown signal received, closing node");
            close.run();
            LogManager.shutdown();
        }, "es-launcher-shutdown"));

        try {
            node.start();
        } catch (Throwable t) {
            close.run();
            fail(logger, "failed to start the node", t);
            return;
        }
        logger.info("elasticsearch node [{}] started in {} ms: http://{}:{} (transport {}), data={}",
            nodeName, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), host, httpPort, transportPort, dataDir);

        // the node's own threads are daemons: keep the JVM alive until shutdown
        stopped.await();
    }

    /** Logs the error and ends the JVM with a one-line summary as the very last output (es.sh shows the log tail). */
    private static void fail(Logger logger, String what, Throwable t) {
        logger.error(what, t);
        StringBuilder causes = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (!causes.isEmpty()) causes.append(" <- ");
            causes.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
        }
        System.out.flush();
        System.err.println("es-launcher: " + what + ": " + causes);
        System.err.flush();
        System.exit(1);
    }
}
