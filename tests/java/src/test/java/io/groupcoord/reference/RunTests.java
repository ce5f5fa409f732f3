package io.groupcoord.reference;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.PrintWriter;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs the test classes named on the command line on this JVM, as surefire would, but without a Maven start per
 * run: Maven's own start, its up-to-date checks and surefire's fork took 4-10 s of every Java test on the
 * two-core test machine, more than most of the tests themselves. tests/reference/java_module.py compiles the
 * module and writes its class path with Maven once per test session, then starts this for each test.
 * Exits 0 only if tests were found and none failed (an aborted test, an unmet assumption, is not a failure,
 * as under surefire).
 */
public final class RunTests {
    private RunTests() {
    }

    public static void main(String[] args) {
        LauncherDiscoveryRequestBuilder request = LauncherDiscoveryRequestBuilder.request();
        for (String name : args) {
            request.selectors(selectClass(name));
        }
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(request.build(), listener);
        TestExecutionSummary summary = listener.getSummary();
        PrintWriter out = new PrintWriter(System.out, true);
        summary.printFailuresTo(out, 60);
        summary.printTo(out);
        boolean passed = summary.getTestsFoundCount() > 0 && summary.getTotalFailureCount() == 0;
        System.exit(passed ? 0 : 1);
    }
}
