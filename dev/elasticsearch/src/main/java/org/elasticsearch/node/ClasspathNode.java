package org.elasticsearch.node;

import org.elasticsearch.env.Environment;
import org.elasticsearch.plugins.ClasspathPluginsService;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.PluginsLoader;
import org.elasticsearch.plugins.PluginsService;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * A production {@link Node} whose modules come from the classpath instead of a distribution's modules/ directory.
 *
 * <p>{@code Node(Environment, PluginsLoader)} always uses the default {@link NodeServiceProvider}, which builds a
 * {@link PluginsService} from directories. {@link NodeConstruction#prepareConstruction} and
 * {@link NodeServiceProvider} are package-private, hence this class sits in {@code org.elasticsearch.node}
 * (works on the class path only: split packages are rejected on the module path).
 */
public class ClasspathNode extends Node {
    public ClasspathNode(Environment environment, Map<String, Class<? extends Plugin>> modules) {
        this(environment, PluginsLoader.createPluginsLoader(Set.of(), Set.of(), Map.of(), false), new LinkedHashMap<>(modules));
    }

    private ClasspathNode(Environment environment, PluginsLoader pluginsLoader, Map<String, Class<? extends Plugin>> modules) {
        super(NodeConstruction.prepareConstruction(environment, pluginsLoader, new NodeServiceProvider() {
            @Override
            PluginsService newPluginService(Environment env, PluginsLoader loader) {
                return new ClasspathPluginsService(env, loader, modules);
            }
        }, true));
    }
}
