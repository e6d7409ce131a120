// The Java RMI bench server: `bench_server PORT` (the script xtask writes
// next to the classes in target/bench-java/). Creates an RMI registry on
// 127.0.0.1:PORT, exports the `Bench` object on the same port (one
// listening socket for both), binds it as `bench`, prints `Bench ready`
// and serves until killed or until `Bench.shutdown`.

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.RMIServerSocketFactory;
import java.rmi.server.UnicastRemoteObject;

public final class BenchServer implements Bench {
    /** The last sequence built by `recvByteSeq`, returned again for the same size (as the C++ server). */
    private byte[] cached = new byte[0];

    @Override
    public void o() {}

    @Override
    public void sendByteSeq(byte[] seq) {}

    @Override
    public synchronized byte[] recvByteSeq(int size) {
        if (cached.length != size) {
            cached = pattern(Math.max(size, 0));
        }
        return cached;
    }

    @Override
    public void shutdown() {
        // After the reply has gone out.
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            System.exit(0);
        });
        t.setDaemon(true);
        t.start();
    }

    /** `n` bytes of the repeating pattern every bench server sends (0, 1, ..., 255, 0, ...). */
    static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) i;
        }
        return b;
    }

    /** Listening sockets on the loopback interface only; equal instances share one port. */
    static final class LoopbackSockets implements RMIServerSocketFactory {
        @Override
        public ServerSocket createServerSocket(int port) throws IOException {
            return new ServerSocket(port, 128, InetAddress.getLoopbackAddress());
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof LoopbackSockets;
        }

        @Override
        public int hashCode() {
            return LoopbackSockets.class.hashCode();
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: bench_server PORT");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        // The address written into the stub the client gets from the registry.
        System.setProperty("java.rmi.server.hostname", "127.0.0.1");
        LoopbackSockets sockets = new LoopbackSockets();
        Registry registry = LocateRegistry.createRegistry(port, null, sockets);
        BenchServer server = new BenchServer();
        Bench stub = (Bench) UnicastRemoteObject.exportObject(server, port, null, sockets);
        registry.rebind("bench", stub);
        System.out.println("Bench ready");
        System.out.flush();
        // The exported objects keep the JVM running; park the main thread.
        Thread.currentThread().join();
    }
}
