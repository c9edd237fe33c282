package example;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 fixture for the agency sandbox: one sandbox for the whole test run (attached or started,
 * see {@link AgencySandbox}), and for each test either a world of its own or the default world reset.
 *
 * <pre>{@code
 * @ExtendWith(AgencySandboxExtension.class)
 * class MySyncTest {
 *     // a world of its own, deleted after the test: tests like this one run in parallel
 *     @Test void syncs(SandboxWorld world) throws Exception { ... world.authorization() ... }
 * }
 *
 * @ExtendWith(AgencySandboxExtension.class)
 * @ResourceLock(AgencySandboxExtension.DEFAULT_WORLD)   // these tests share the default world: one at a time
 * class MyDefaultWorldTest {
 *     // the default world (Client Id abc), reset before the test
 *     @Test void syncs(AgencySandbox sandbox) throws Exception { ... sandbox.url() ... }
 * }
 * }</pre>
 *
 * A test that takes a {@link SandboxWorld} parameter gets a world of its own (POST /_sandbox/worlds),
 * deleted when the test ends, and leaves the default world alone (it may also take the AgencySandbox,
 * to make more worlds), so such tests run in parallel (junit.jupiter.execution.parallel.enabled=true)
 * against one sandbox. Any other test gets the default world reset before it. The sandbox lives in
 * the root context's store, so every test class of the run shares it, and it is stopped (with every
 * process it started) once, when the run ends.
 */
public final class AgencySandboxExtension implements BeforeAllCallback, BeforeEachCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(AgencySandboxExtension.class);
    /** The lock of tests that use the default world: {@code @ResourceLock(AgencySandboxExtension.DEFAULT_WORLD)}. */
    public static final String DEFAULT_WORLD = "agency-sandbox.default-world";
    /** Idle seconds after which the sandbox deletes a world an interrupted run left behind. */
    private static final int WORLD_TTL_SECONDS = 600;

    /** Closes the sandbox when the root context (the test run) closes. */
    private static final class Running implements ExtensionContext.Store.CloseableResource {
        final AgencySandbox sandbox;

        Running() {
            try {
                sandbox = AgencySandbox.start();
            } catch (Exception e) {
                throw new IllegalStateException("the agency sandbox did not start: " + e.getMessage(), e);
            }
        }

        @Override
        public void close() {
            sandbox.close();
        }
    }

    /** Deletes the test's world when the test's context closes. */
    private static final class OpenWorld implements ExtensionContext.Store.CloseableResource {
        final SandboxWorld world;

        OpenWorld(ExtensionContext context) {
            try {
                String test = context.getRequiredTestClass().getSimpleName() + "." + context.getRequiredTestMethod().getName();
                world = sandbox(context).createWorld(test + " " + context.getDisplayName(), WORLD_TTL_SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("could not create a world: " + e.getMessage(), e);
            }
        }

        @Override
        public void close() {
            world.close();
        }
    }

    public static AgencySandbox sandbox(ExtensionContext context) {
        return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(Running.class, key -> new Running(), Running.class).sandbox;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        sandbox(context);
    }

    // One call restores everything the previous test changed: data, journal, faults, clock. A test
    // that works in a world of its own leaves the default world alone (others may be using it).
    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        List<Class<?>> parameters = context.getTestMethod().map(Method::getParameterTypes).map(Arrays::asList).orElse(List.of());
        if (!parameters.contains(SandboxWorld.class)) sandbox(context).reset();
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == AgencySandbox.class || type == SandboxWorld.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        if (parameter.getParameter().getType() == AgencySandbox.class) return sandbox(context);
        // one world per test, however many parameters ask for it
        return context.getStore(NAMESPACE).getOrComputeIfAbsent(OpenWorld.class, key -> new OpenWorld(context), OpenWorld.class).world;
    }
}
