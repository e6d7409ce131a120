// The Java RMI bench client: `bench_client PORT [WORKLOAD...]` (the script
// xtask writes next to the classes in target/bench-java/). Looks `bench`
// up in the RMI registry on 127.0.0.1:PORT and runs the workloads (all
// when none is named): `latency` (100,000 empty twoway calls),
// `byteseq_send` and `byteseq_recv` (2,000 calls carrying 500,000 bytes),
// the counts of every bench client, times `BENCH_SCALE`. Prints one JSON
// object per workload, as the other bench clients do:
// {"impl":"rmi","workload":..,"calls":..,"seconds":..,"us_per_call":..,"mbit_s":..,"calls_s":..}
//
// Before each timed run the JIT is warmed with untimed calls of the same
// kind (JIT_WARM_UP_*, not scaled), so the figures are those of compiled
// code, as a long-running Java server and client have.

import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

public final class BenchClient {
    /** Timed empty calls of `latency` (as bench_client). */
    static final int LATENCY_CALLS = 100_000;
    /** Timed calls of `byteseq_*` (BYTESEQ_CALLS of benches/programs/src/lib.rs). */
    static final int BYTESEQ_CALLS = 2_000;
    /** Bytes per `byteseq_*` call. */
    static final int BYTESEQ_SIZE = 500_000;
    /** Untimed empty calls before `latency`: well past HotSpot's C2 thresholds. */
    static final int JIT_WARM_UP_LATENCY = 20_000;
    /** Untimed calls before `byteseq_*`. */
    static final int JIT_WARM_UP_BYTESEQ = 200;

    static final List<String> WORKLOADS = Arrays.asList("latency", "byteseq_send", "byteseq_recv");

    /** `n` times `BENCH_SCALE`, at least 1. */
    static int scaled(int n, double scale) {
        return (int) Math.max(1, Math.round(n * scale));
    }

    static double benchScale() {
        String s = System.getenv("BENCH_SCALE");
        if (s == null) {
            return 1.0;
        }
        try {
            double f = Double.parseDouble(s.trim());
            if (f > 0 && !Double.isInfinite(f)) {
                return f;
            }
        } catch (NumberFormatException e) {
            // Reported below.
        }
        System.err.println("bench: BENCH_SCALE must be a positive number, not `" + s + "`");
        System.exit(2);
        return 0;
    }

    static void report(String workload, int calls, long nanos, double payloadBytes) {
        double seconds = nanos / 1e9;
        double us = seconds * 1e6 / Math.max(calls, 1);
        double mbit = seconds > 0 ? payloadBytes * 8 / seconds / 1e6 : 0;
        double callsS = seconds > 0 ? calls / seconds : 0;
        System.out.println(String.format(Locale.ROOT,
                "{\"impl\":\"rmi\",\"workload\":\"%s\",\"calls\":%d,\"seconds\":%.6f,\"us_per_call\":%.3f,\"mbit_s\":%.3f,\"calls_s\":%.1f}",
                workload, calls, seconds, us, mbit, callsS));
        System.out.flush();
    }

    static void latency(Bench b, double scale) throws Exception {
        for (int i = 0; i < JIT_WARM_UP_LATENCY; i++) {
            b.o();
        }
        int n = scaled(LATENCY_CALLS, scale);
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            b.o();
        }
        report("latency", n, System.nanoTime() - start, 0);
    }

    static void byteseqSend(Bench b, double scale) throws Exception {
        byte[] seq = BenchServer.pattern(BYTESEQ_SIZE);
        for (int i = 0; i < JIT_WARM_UP_BYTESEQ; i++) {
            b.sendByteSeq(seq);
        }
        int n = scaled(BYTESEQ_CALLS, scale);
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            b.sendByteSeq(seq);
        }
        report("byteseq_send", n, System.nanoTime() - start, (double) n * BYTESEQ_SIZE);
    }

    static void byteseqRecv(Bench b, double scale) throws Exception {
        for (int i = 0; i < JIT_WARM_UP_BYTESEQ; i++) {
            check(b.recvByteSeq(BYTESEQ_SIZE));
        }
        int n = scaled(BYTESEQ_CALLS, scale);
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            check(b.recvByteSeq(BYTESEQ_SIZE));
        }
        report("byteseq_recv", n, System.nanoTime() - start, (double) n * BYTESEQ_SIZE);
    }

    /** Fails the run when a reply does not hold what the server was asked for. */
    static void check(byte[] reply) {
        if (reply.length != BYTESEQ_SIZE) {
            System.err.println("bench_client: byteseq_recv: got " + reply.length + " bytes, expected " + BYTESEQ_SIZE);
            System.exit(1);
        }
    }

    public static void main(String[] args) {
        int port = -1;
        try {
            port = args.length > 0 ? Integer.parseInt(args[0]) : -1;
        } catch (NumberFormatException e) {
            // Reported below.
        }
        if (port < 0 || port > 65535) {
            System.err.println("usage: bench_client PORT [WORKLOAD...]");
            System.exit(2);
        }
        List<String> workloads = args.length > 1 ? Arrays.asList(args).subList(1, args.length) : WORKLOADS;
        for (String w : workloads) {
            if (!w.equals("shutdown") && !WORKLOADS.contains(w)) {
                System.err.println("bench_client: unknown workload `" + w + "`");
                System.exit(2);
            }
        }
        double scale = benchScale();
        try {
            Registry registry = LocateRegistry.getRegistry("127.0.0.1", port);
            Bench b = (Bench) registry.lookup("bench");
            for (String w : workloads) {
                switch (w) {
                    case "latency":
                        latency(b, scale);
                        break;
                    case "byteseq_send":
                        byteseqSend(b, scale);
                        break;
                    case "byteseq_recv":
                        byteseqRecv(b, scale);
                        break;
                    default:
                        b.shutdown();
                        break;
                }
            }
        } catch (Exception e) {
            System.err.println("bench_client: " + e);
            System.exit(1);
        }
        // RMI's connection reaper threads would keep the JVM up for a while.
        System.exit(0);
    }
}
