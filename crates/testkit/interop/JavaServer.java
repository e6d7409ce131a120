// Ice 3.7 Java server of the floe interop suite (same behaviour as py_server.py).
//
//     java -cp ice.jar:classes:server-classes JavaServer <port> [--Ice.Prop=value ...]
//
// Listens on tcp -h 127.0.0.1 -p <port> (0 picks a free port), or on
// --Interop.Endpoints=... when given (e.g. ssl, with the IceSSL plugin and its
// properties among the arguments), serves Interop::Test as "test" (default facet
// and facet "facetA") and prints "READY <port>" once listening. Exits on
// Test::shutdown() or when killed. server-classes holds ServerOnly.ice's types,
// which clients must not have (they receive them sliced).

import Interop.*;
import com.zeroc.Ice.*;

import java.util.*;

public class JavaServer
{
    // Counters shared by every facet of the servant.
    static class State
    {
        int onewayTotal = 0;
        int idemCalls = 0;
        int dropCalls = 0;
    }

    static class TestI implements Test
    {
        final State state;

        TestI(State state)
        {
            this.state = state;
        }

        public Test.OpPrimsResult opPrims(boolean b, byte y, short s, int i, long l, float f, double d, String str,
                                          Current current)
        {
            return new Test.OpPrimsResult(str, b, y, s, i, l, f, d);
        }

        public byte[] opByteSeq(byte[] v, Current current) { return v; }

        public Seqs opSeqs(Seqs v, Current current) { return v; }

        public Test.OpDictsResult opDicts(Map<String, Integer> a, Map<Integer, String> b, Map<String, Mixed> c,
                                          Current current)
        {
            return new Test.OpDictsResult(a, b, c);
        }

        public Test.OpEnumsResult opEnums(Color c, Sparse s, Color[] cs, Current current)
        {
            return new Test.OpEnumsResult(c, s, cs);
        }

        public Test.OpStructsResult opStructs(Point p, Mixed m, Nested n, Point[] ps, Mixed[] ms, Current current)
        {
            return new Test.OpStructsResult(n, p, m, ps, ms);
        }

        public Test.OpOptionalResult opOptional(int req, OptionalInt i, Optional<String> s, Optional<Point> p,
                                                Optional<int[]> iseq, Optional<Mixed> m, Optional<Color> c,
                                                Optional<Boolean> bb, Current current)
        {
            return new Test.OpOptionalResult(i, s, p, iseq, m, c, bb);
        }

        public Base opBase(Base b, Current current) { return b; }

        public Node opGraph(Node n, Current current) { return n; }

        public Pair opPair(Pair p, Current current) { return p; }

        public WithOpt opWithOpt(WithOpt w, Current current) { return w; }

        public Base getUnknownClass(Current current) { return new SecretDerived(7, "known", "hidden"); }

        public void throwErr(int which, Current current) throws BaseErr
        {
            if(which == 1)
            {
                throw new BaseErr("base");
            }
            if(which == 2)
            {
                throw new DerivedErr("derived", 42);
            }
        }

        public void throwSliced(int which, Current current) throws BaseErr
        {
            if(which == 1)
            {
                throw new DerivedErr("sliced", 43);
            }
            if(which == 2)
            {
                throw new SecretErr("secret", 44, "hidden");
            }
        }

        public void throwUndeclared(Current current)
        {
            // BaseErr, which the operation does not declare (as the other
            // servers do): Java needs the unchecked cast to throw it.
            JavaServer.<RuntimeException>raise(new BaseErr("undeclared"));
        }

        public void throwNonIce(Current current) { throw new IllegalStateException("java error"); }

        public ObjectPrx opProxy(ObjectPrx p, Current current) { return p; }

        public void onewayAdd(int n, Current current)
        {
            synchronized(state)
            {
                state.onewayTotal += n;
            }
        }

        public int getOnewayTotal(Current current)
        {
            synchronized(state)
            {
                return state.onewayTotal;
            }
        }

        public int idemDropOnce(Current current)
        {
            int calls;
            synchronized(state)
            {
                calls = ++state.idemCalls;
            }
            return dropFirst(calls, current);
        }

        public int dropOnce(Current current)
        {
            int calls;
            synchronized(state)
            {
                calls = ++state.dropCalls;
            }
            return dropFirst(calls, current);
        }

        /** The first call's connection is closed forcefully (the caller retries or fails). */
        private static int dropFirst(int calls, Current current)
        {
            if(calls == 1)
            {
                current.con.close(ConnectionClose.Forcefully);
            }
            return calls;
        }

        public int sleepMs(int ms, Current current)
        {
            try
            {
                Thread.sleep(ms);
            }
            catch(InterruptedException e)
            {
                Thread.currentThread().interrupt();
            }
            return ms;
        }

        public int callCallback(String name, int a, int b, Current current)
        {
            return CallbackPrx.uncheckedCast(current.con.createProxy(new Identity(name, ""))).add(a, b);
        }

        public Map<String, String> getContext(Current current) { return current.ctx; }

        public String getFacet(Current current) { return current.facet; }

        public void reset(Current current)
        {
            synchronized(state)
            {
                state.onewayTotal = 0;
                state.idemCalls = 0;
                state.dropCalls = 0;
            }
        }

        public void shutdown(Current current) { current.adapter.getCommunicator().shutdown(); }
    }

    @SuppressWarnings("unchecked")
    static <E extends Throwable> void raise(Throwable e) throws E
    {
        throw (E)e;
    }

    public static void main(String[] args)
    {
        if(args.length < 1)
        {
            System.err.println("usage: JavaServer <port> [--Ice.Prop=value ...]");
            System.exit(2);
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        InitializationData init = new InitializationData();
        init.properties = Util.createProperties(rest);
        init.properties.parseCommandLineOptions("Interop", rest);
        if(init.properties.getProperty("Interop.Endpoints").isEmpty())
        {
            init.properties.setProperty("Interop.Endpoints", "tcp -h 127.0.0.1 -p " + args[0]);
        }
        init.properties.setProperty("Ice.ThreadPool.Server.Size", "8");
        init.properties.setProperty("Ice.ThreadPool.Server.SizeMax", "8");
        init.properties.setProperty("Ice.Warn.Connections", "0");
        init.properties.setProperty("Ice.Warn.Dispatch", "0");
        try(Communicator comm = Util.initialize(init))
        {
            ObjectAdapter adapter = comm.createObjectAdapter("Interop");
            State state = new State();
            Identity ident = Util.stringToIdentity("test");
            adapter.add(new TestI(state), ident);
            adapter.addFacet(new TestI(state), ident, "facetA");
            adapter.activate();
            EndpointInfo info = adapter.getEndpoints()[0].getInfo();
            while(!(info instanceof IPEndpointInfo) && info.underlying != null)
            {
                info = info.underlying; // ssl: the TCP endpoint under it
            }
            System.out.println("READY " + ((IPEndpointInfo)info).port);
            System.out.flush();
            comm.waitForShutdown();
        }
    }
}
