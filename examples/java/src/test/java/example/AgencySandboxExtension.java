package example;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 fixture for the agency sandbox: one sandbox for the whole test run (attached or started,
 * see {@link AgencySandbox}), a clean slate before each test, and the sandbox as a test parameter.
 *
 * <pre>{@code
 * @ExtendWith(AgencySandboxExtension.class)
 * class MySyncTest {
 *     @Test void syncs(AgencySandbox sandbox) throws Exception { ... sandbox.url() ... }
 * }
 * }</pre>
 *
 * The sandbox lives in the root context's store, so every test class of the run shares it, and it
 * is stopped (with every process it started) when the run ends.
 */
public final class AgencySandboxExtension implements BeforeAllCallback, BeforeEachCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(AgencySandboxExtension.class);

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

    public static AgencySandbox sandbox(ExtensionContext context) {
        return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(Running.class, key -> new Running(), Running.class).sandbox;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        sandbox(context);
    }

    // One call restores everything the previous test changed: data, journal, faults, clock.
    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        sandbox(context).reset();
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == AgencySandbox.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return sandbox(context);
    }
}
