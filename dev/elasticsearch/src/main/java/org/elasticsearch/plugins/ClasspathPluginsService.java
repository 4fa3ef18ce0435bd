package org.elasticsearch.plugins;

import org.elasticsearch.Version;
import org.elasticsearch.action.admin.cluster.node.info.PluginsAndModules;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A {@link PluginsService} whose plugins are classes already on the application classpath.
 *
 * <p>The production server loads modules/plugins from directories of a distribution (each in its own module layer).
 * We have no distribution, only Maven jars, so the few modules we need (transport-netty4) are instantiated
 * directly and reported as "modules". It lives in {@code org.elasticsearch.plugins} because
 * {@link PluginsService.LoadedPlugin} and {@link PluginsService#loadPlugin} are package-private; this works
 * because the server jar is on the class path (unnamed module), not the module path.
 */
public class ClasspathPluginsService extends PluginsService {
    private final List<LoadedPlugin> loaded;
    private final PluginsAndModules info;

    public ClasspathPluginsService(Environment environment, PluginsLoader pluginsLoader,
                                   Map<String, Class<? extends Plugin>> modules) {
        // pluginsLoader is an empty loader (no bundles), so the parent loads nothing itself
        super(environment.settings(), environment.configDir(), pluginsLoader);
        Settings settings = environment.settings();
        List<LoadedPlugin> plugins = new ArrayList<>(modules.size());
        List<PluginDescriptor> descriptors = new ArrayList<>(modules.size());
        for (Map.Entry<String, Class<? extends Plugin>> entry : modules.entrySet()) {
            Class<? extends Plugin> pluginClass = entry.getValue();
            PluginDescriptor descriptor = new PluginDescriptor(
                entry.getKey(),                                   // name
                "classpath module " + pluginClass.getName(),      // description
                Version.CURRENT.toString(),                       // version
                Version.CURRENT.toString(),                       // elasticsearchVersion
                Integer.toString(Runtime.version().feature()),    // javaVersion
                pluginClass.getName(),                            // classname
                null,                                             // moduleName (not modular here)
                List.of(),                                        // extendedPlugins
                false,                                            // hasNativeController
                false,                                            // isLicensed
                false,                                            // isModular
                false,                                            // isStable
                PluginDescriptor.DeploymentTarget.ALL);
            Plugin instance = loadPlugin(pluginClass, settings, environment.configDir());
            plugins.add(new LoadedPlugin(descriptor, instance, pluginClass.getClassLoader()));
            descriptors.add(descriptor);
        }
        this.loaded = List.copyOf(plugins);
        this.info = new PluginsAndModules(List.of(), List.copyOf(descriptors));
    }

    @Override
    protected List<LoadedPlugin> plugins() {
        return loaded;
    }

    @Override
    public PluginsAndModules info() {
        return info;
    }
}
