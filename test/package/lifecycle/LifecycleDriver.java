package example;

import java.io.BufferedReader;
import java.io.InputStreamReader;

/**
 * Starts a sandbox through examples/java's AgencySandbox, prints {@code started <pid> <url>}, then,
 * on a line from stdin, by the mode in args[0]: {@code stop} closes it and prints {@code stopped};
 * {@code exit} exits without closing it (the fixture's shutdown hook must); {@code wait} ignores
 * the line and waits for a signal to end the JVM.
 */
public final class LifecycleDriver {
    public static void main(String[] args) throws Exception {
        AgencySandbox sandbox = AgencySandbox.start();
        System.out.println("started " + sandbox.process().pid() + " " + sandbox.url());
        System.out.flush();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in));
        switch (args[0]) {
            case "stop" -> {
                stdin.readLine();
                sandbox.close();
                System.out.println("stopped");
            }
            case "exit" -> {
                stdin.readLine();
                System.exit(0);
            }
            default -> Thread.sleep(Long.MAX_VALUE);
        }
    }
}
