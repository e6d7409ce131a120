// The Java RMI side of `cargo xtask compare` (the `rmi` column): the
// Bench.ice workloads that plain JDK RMI has an equivalent for, as one
// remote interface. Built with javac into target/bench-java/ by
// xtask/src/compare/build.rs; no Maven, no dependency beyond the JDK.

import java.rmi.Remote;
import java.rmi.RemoteException;

/** Bench.ice's `Latency::o` and `Throughput::{send,recv}ByteSeq` as RMI calls. */
public interface Bench extends Remote {
    /** The smallest twoway call (`Latency::o`, the `latency` workload). */
    void o() throws RemoteException;

    /** Receives a byte sequence and drops it (`byteseq_send`). */
    void sendByteSeq(byte[] seq) throws RemoteException;

    /** Returns `size` bytes (`byteseq_recv`). */
    byte[] recvByteSeq(int size) throws RemoteException;

    /** Stops the server (the `shutdown` pseudo-workload). */
    void shutdown() throws RemoteException;
}
