// Ice 3.7 Java client of the floe interop suite: the same checks, names and
// output as py_client.py.
//
//     java -cp ice.jar:classes JavaClient "<endpoint>" [--only=name,name] [--Ice.Prop=value ...]
//
// Prints "PASS <name>" or "FAIL <name>: <detail>" per check, then
// "SUMMARY <passed> passed, <failed> failed"; exit status 0 only if all passed.

import Interop.*;
import com.zeroc.Ice.*;

import java.lang.Exception;
import java.util.*;
import java.util.concurrent.CompletableFuture;

public class JavaClient
{
    static class CheckFailed extends RuntimeException
    {
        CheckFailed(String detail)
        {
            super(detail);
        }
    }

    interface Body
    {
        void run() throws Exception;
    }

    static void expect(boolean cond, String detail)
    {
        if(!cond)
        {
            throw new CheckFailed(detail);
        }
    }

    static void eq(java.lang.Object got, java.lang.Object want, String what)
    {
        if(!Objects.deepEquals(got, want))
        {
            throw new CheckFailed(what + ": got " + show(got) + ", want " + show(want));
        }
    }

    static String show(java.lang.Object v)
    {
        if(v instanceof java.lang.Object[])
        {
            return Arrays.deepToString((java.lang.Object[])v);
        }
        return String.valueOf(v);
    }

    @SuppressWarnings("unchecked")
    static <E extends Throwable> E raises(Class<E> type, Body fn) throws Exception
    {
        try
        {
            fn.run();
        }
        catch(Throwable e)
        {
            if(type.isInstance(e))
            {
                return (E)e;
            }
            String name = e instanceof com.zeroc.Ice.Exception ? ((com.zeroc.Ice.Exception)e).ice_id() : e.toString();
            throw new CheckFailed("expected " + type.getSimpleName() + ", got " + name);
        }
        throw new CheckFailed("expected " + type.getSimpleName() + ", got no exception");
    }

    static void waitTotal(TestPrx test, int want) throws Exception
    {
        long deadline = System.currentTimeMillis() + 5000;
        int total = test.getOnewayTotal();
        while(total != want && System.currentTimeMillis() < deadline)
        {
            Thread.sleep(20);
            total = test.getOnewayTotal();
        }
        eq(total, want, "oneway total");
    }

    static class CallbackI implements Interop.Callback
    {
        volatile int calls = 0;

        @Override
        public int add(int a, int b, Current current)
        {
            calls += 1;
            return a + b;
        }
    }

    static Mixed mixed(String name, double weight, boolean flag, int... values)
    {
        return new Mixed(name, weight, flag, values);
    }

    static void checks(Communicator comm, String endpoint, LinkedHashMap<String, Body> out)
    {
        TestPrx test = TestPrx.uncheckedCast(comm.stringToProxy("test:" + endpoint));

        out.put("ping", () -> test.ice_ping());

        out.put("is_a", () -> {
            expect(test.ice_isA("::Interop::Test"), "ice_isA(::Interop::Test) is false");
            expect(!test.ice_isA("::Interop::Callback"), "ice_isA(::Interop::Callback) is true");
        });

        out.put("ids", () -> {
            eq(test.ice_ids(), new String[] {"::Ice::Object", "::Interop::Test"}, "ice_ids");
            eq(test.ice_id(), "::Interop::Test", "ice_id");
        });

        out.put("prims", () -> {
            String s = "h\u00e9llo \u20ac";
            Test.OpPrimsResult r = test.opPrims(true, (byte)200, (short)-2, 0x01020304, -1234567890123L, 1.5f, -2.25, s);
            eq(r.returnValue, s, "return");
            eq(r.ob, true, "ob");
            eq(r.oy, (byte)200, "oy");
            eq(r.os, (short)-2, "os");
            eq(r.oi, 0x01020304, "oi");
            eq(r.ol, -1234567890123L, "ol");
            eq(r.of, 1.5f, "of");
            eq(r.od, -2.25, "od");
        });

        out.put("prims_extremes", () -> {
            StringBuilder b = new StringBuilder();
            for(int i = 0; i < 300; ++i)
            {
                b.append('x');
            }
            String big = b.append(new String(Character.toChars(0x1F600))).toString();
            Test.OpPrimsResult r = test.opPrims(false, (byte)0, Short.MIN_VALUE, Integer.MIN_VALUE, Long.MIN_VALUE,
                                                -Float.MAX_VALUE, 1e308, big);
            eq(new java.lang.Object[] {r.returnValue, r.ob, r.oy, r.os, r.oi, r.ol, r.of, r.od},
               new java.lang.Object[] {big, false, (byte)0, Short.MIN_VALUE, Integer.MIN_VALUE, Long.MIN_VALUE,
                                       -Float.MAX_VALUE, 1e308}, "opPrims min");
            r = test.opPrims(true, (byte)255, Short.MAX_VALUE, Integer.MAX_VALUE, Long.MAX_VALUE, Float.MAX_VALUE,
                             -1e-300, "");
            eq(new java.lang.Object[] {r.returnValue, r.ob, r.oy, r.os, r.oi, r.ol, r.of, r.od},
               new java.lang.Object[] {"", true, (byte)255, Short.MAX_VALUE, Integer.MAX_VALUE, Long.MAX_VALUE,
                                       Float.MAX_VALUE, -1e-300}, "opPrims max");
        });

        out.put("byte_seq", () -> {
            eq(test.opByteSeq(new byte[0]), new byte[0], "empty");
            eq(test.opByteSeq(new byte[] {1, 2, 3}), new byte[] {1, 2, 3}, "small");
            byte[] data = new byte[500000];
            for(int i = 0; i < data.length; ++i)
            {
                data[i] = (byte)((i * 31 + 7) % 256);
            }
            expect(Arrays.equals(test.opByteSeq(data), data), "500000-byte echo differs");
        });

        out.put("seqs", () -> {
            int[] ints = new int[300];
            for(int i = 0; i < 300; ++i)
            {
                ints[i] = i - 150;
            }
            Seqs v = new Seqs(new boolean[] {true, false, true}, new byte[] {0, 1, (byte)255},
                              new short[] {-1, 2, 32767}, ints, new long[] {1L << 40, -5}, new float[] {0.5f, -1.25f},
                              new double[] {3.125, -1e300}, new String[] {"a", "", "h\u00e9"},
                              new String[][] {{"x"}, {}, {"y", "z"}});
            Seqs r = test.opSeqs(v);
            eq(r.boolSeq, v.boolSeq, "boolSeq");
            eq(r.byteSeq, v.byteSeq, "byteSeq");
            eq(r.shortSeq, v.shortSeq, "shortSeq");
            eq(r.intSeq, v.intSeq, "intSeq");
            eq(r.longSeq, v.longSeq, "longSeq");
            eq(r.floatSeq, v.floatSeq, "floatSeq");
            eq(r.doubleSeq, v.doubleSeq, "doubleSeq");
            eq(r.stringSeq, v.stringSeq, "stringSeq");
            eq(r.stringSeqSeq, v.stringSeqSeq, "stringSeqSeq");
        });

        out.put("dicts", () -> {
            Map<String, Integer> a = new HashMap<>();
            a.put("one", 1);
            a.put("two", 2);
            a.put("neg", -3);
            Map<Integer, String> b = new HashMap<>();
            b.put(1, "a");
            b.put(-7, "b");
            Map<String, Mixed> c = new HashMap<>();
            c.put("m", mixed("n", 0.5, true, 1, 2));
            c.put("e", mixed("", 0.0, false));
            Test.OpDictsResult r = test.opDicts(a, b, c);
            eq(r.returnValue, a, "return");
            eq(r.ob, b, "ob");
            eq(r.oc, c, "oc");
        });

        out.put("enums", () -> {
            Color[] cs = {Color.Red, Color.Green, Color.Blue};
            Test.OpEnumsResult r = test.opEnums(Color.Blue, Sparse.C, cs);
            eq(r.returnValue, Color.Blue, "return");
            eq(r.os, Sparse.C, "os");
            eq(r.ocs, cs, "ocs");
            r = test.opEnums(Color.Red, Sparse.A, new Color[0]);
            eq(new java.lang.Object[] {r.returnValue, r.os, r.ocs.length},
               new java.lang.Object[] {Color.Red, Sparse.A, 0}, "second call");
        });

        out.put("structs", () -> {
            Point p = new Point(1, -2);
            Mixed m = mixed("mix", 2.5, true, 1, 2, 3);
            Map<String, Integer> d = new HashMap<>();
            d.put("k", 1);
            Nested n = new Nested(new Point(3, 4), mixed("inner", -0.5, false), d, Color.Green,
                                  new Point[] {new Point(5, 6), new Point(7, 8)});
            Point[] ps = {new Point(1, 2), new Point(3, 4), new Point(-5, 6)};
            Mixed[] ms = {mixed("a", 1.0, false, 9), mixed("", 0.0, true)};
            Test.OpStructsResult r = test.opStructs(p, m, n, ps, ms);
            eq(r.returnValue, n, "return");
            eq(r.op, p, "op");
            eq(r.om, m, "om");
            eq(r.ops, ps, "ops");
            eq(r.oms, ms, "oms");
        });

        out.put("optionals_set", () -> {
            Mixed m = mixed("o", 1.0, true, 4);
            Test.OpOptionalResult r = test.opOptional(1, 5, "s", new Point(1, 2), new int[] {1, 2, 3}, m, Color.Blue, true);
            expect(r.returnValue.isPresent() && r.returnValue.getAsInt() == 5, "return");
            eq(r.os.orElse(null), "s", "os");
            eq(r.op.orElse(null), new Point(1, 2), "op");
            eq(r.oiseq.orElse(null), new int[] {1, 2, 3}, "oiseq");
            eq(r.om.orElse(null), m, "om");
            eq(r.oc.orElse(null), Color.Blue, "oc");
            eq(r.obb.orElse(null), true, "obb");
        });

        out.put("optionals_unset", () -> {
            Test.OpOptionalResult r = test.opOptional(0, OptionalInt.empty(), Optional.empty(), Optional.empty(),
                                                      Optional.empty(), Optional.empty(), Optional.empty(),
                                                      Optional.empty());
            expect(!r.returnValue.isPresent() && !r.os.isPresent() && !r.op.isPresent() && !r.oiseq.isPresent() &&
                   !r.om.isPresent() && !r.oc.isPresent() && !r.obb.isPresent(), "expected all unset");
            r = test.opOptional(2, OptionalInt.of(9), Optional.empty(), Optional.empty(), Optional.empty(),
                                Optional.empty(), Optional.empty(), Optional.of(false));
            expect(r.returnValue.isPresent() && r.returnValue.getAsInt() == 9, "return");
            expect(!r.os.isPresent() && !r.op.isPresent() && !r.oiseq.isPresent() && !r.om.isPresent() &&
                   !r.oc.isPresent(), "expected unset outs");
            eq(r.obb.orElse(null), false, "obb");
        });

        out.put("class_base", () -> {
            Base r = test.opBase(new Base(5));
            expect(r != null && r.getClass() == Base.class, "type");
            eq(r.a, 5, "a");
        });

        out.put("class_derived", () -> {
            Base r = test.opBase(new Derived(6, "d"));
            expect(r instanceof Derived, "type");
            eq(r.a, 6, "a");
            eq(((Derived)r).s, "d", "s");
        });

        out.put("class_null", () -> expect(test.opBase(null) == null, "null class did not come back null"));

        out.put("class_graph_cycle", () -> {
            Node n1 = new Node(1, null);
            Node n2 = new Node(2, n1);
            n1.next = n2;
            Node r = test.opGraph(n1);
            eq(r.v, 1, "v1");
            eq(r.next.v, 2, "v2");
            expect(r.next.next == r, "cycle not preserved");
        });

        out.put("class_shared", () -> {
            Base b = new Base(9);
            Pair r = test.opPair(new Pair(b, b));
            expect(r.x == r.y, "shared instance came back as two instances");
            eq(r.x.a, 9, "x.a");
            r = test.opPair(new Pair(new Base(1), new Derived(2, "z")));
            expect(r.y instanceof Derived, "y type");
            eq(r.x.a, 1, "x.a");
            eq(r.y.a, 2, "y.a");
            eq(((Derived)r.y).s, "z", "y.s");
        });

        out.put("class_optional_members", () -> {
            WithOpt r = test.opWithOpt(new WithOpt(1, 2, "z"));
            expect(r.a == 1 && r.hasB() && r.getB() == 2 && r.hasS() && r.getS().equals("z"), "set members");
            r = test.opWithOpt(new WithOpt(3));
            expect(r.a == 3 && !r.hasB() && !r.hasS(), "unset members");
        });

        out.put("class_unknown_sliced", () -> {
            Base r = test.getUnknownClass();
            expect(r != null && r.getClass() == Derived.class, "type: " + (r == null ? "null" : r.ice_id()));
            eq(r.a, 7, "a");
            eq(((Derived)r).s, "known", "s");
        });

        out.put("exc_base", () -> {
            BaseErr e = raises(BaseErr.class, () -> test.throwErr(1));
            expect(e.getClass() == BaseErr.class, "type");
            eq(e.reason, "base", "reason");
        });

        out.put("exc_derived", () -> {
            DerivedErr e = raises(DerivedErr.class, () -> test.throwErr(2));
            eq(e.reason, "derived", "reason");
            eq(e.code, 42, "code");
        });

        out.put("exc_none", () -> test.throwErr(0));

        out.put("exc_sliced_known", () -> {
            DerivedErr e = raises(DerivedErr.class, () -> test.throwSliced(1));
            eq(e.reason, "sliced", "reason");
            eq(e.code, 43, "code");
        });

        out.put("exc_sliced_unknown", () -> {
            DerivedErr e = raises(DerivedErr.class, () -> test.throwSliced(2));
            expect(e.getClass() == DerivedErr.class, "type");
            eq(e.reason, "secret", "reason");
            eq(e.code, 44, "code");
        });

        out.put("exc_undeclared", () -> {
            UnknownUserException e = raises(UnknownUserException.class, () -> test.throwUndeclared());
            expect(e.unknown.contains("Interop::BaseErr"), "unknown = " + e.unknown);
        });

        out.put("exc_non_ice", () -> raises(UnknownException.class, () -> test.throwNonIce()));

        out.put("object_not_exist", () -> {
            TestPrx missing = TestPrx.uncheckedCast(comm.stringToProxy("missing:" + endpoint));
            ObjectNotExistException e = raises(ObjectNotExistException.class, () -> missing.ice_ping());
            eq(e.id.name, "missing", "id");
            raises(ObjectNotExistException.class, () -> missing.getFacet());
        });

        out.put("facet_not_exist", () -> raises(FacetNotExistException.class, () -> test.ice_facet("nope").ice_ping()));

        out.put("operation_not_exist", () -> {
            UnimplementedPrx u = UnimplementedPrx.uncheckedCast(test);
            OperationNotExistException e = raises(OperationNotExistException.class, () -> u.missing());
            eq(e.operation, "missing", "operation");
        });

        out.put("proxy_param", () -> {
            ObjectPrx p = comm.stringToProxy("cat/id -f fac -o:tcp -h 127.0.0.1 -p 12345 -t 500");
            ObjectPrx r = test.opProxy(p);
            expect(r != null, "null");
            eq(comm.proxyToString(r), comm.proxyToString(p), "proxy");
            expect(test.opProxy(null) == null, "null proxy did not come back null");
            TestPrx back = TestPrx.uncheckedCast(test.opProxy(test.ice_facet("facetA")));
            eq(back.getFacet(), "facetA", "call through returned proxy");
        });

        out.put("facets", () -> {
            eq(test.getFacet(), "", "default facet");
            eq(TestPrx.uncheckedCast(test.ice_facet("facetA")).getFacet(), "facetA", "facetA");
        });

        out.put("context", () -> {
            eq(test.getContext(), new HashMap<String, String>(), "empty");
            Map<String, String> ctx = new HashMap<>();
            ctx.put("a", "b");
            ctx.put("k", "v");
            eq(test.getContext(ctx), ctx, "per call");
            Map<String, String> pctx = new HashMap<>();
            pctx.put("p", "q");
            eq(test.ice_context(pctx).getContext(), pctx, "proxy context");
        });

        out.put("oneway", () -> {
            test.reset();
            TestPrx ow = test.ice_oneway();
            for(int n = 1; n <= 5; ++n)
            {
                ow.onewayAdd(n);
            }
            waitTotal(test, 15);
        });

        out.put("batch_oneway", () -> {
            test.reset();
            TestPrx b = test.ice_batchOneway();
            b.onewayAdd(10);
            b.onewayAdd(20);
            Thread.sleep(200);
            eq(test.getOnewayTotal(), 0, "total before flush");
            b.ice_flushBatchRequests();
            waitTotal(test, 30);
        });

        out.put("compress", () -> {
            TestPrx z = test.ice_compress(true);
            byte[] data = new byte[100000];
            for(int i = 0; i < data.length; ++i)
            {
                data[i] = (byte)(i % 7);
            }
            expect(Arrays.equals(z.opByteSeq(data), data), "compressed echo differs");
            eq(z.opByteSeq(new byte[] {'a', 'b'}), new byte[] {'a', 'b'}, "small compressed echo");
        });

        out.put("idempotent_retry", () -> {
            test.reset();
            eq(test.idemDropOnce(), 2, "idemDropOnce");
        });

        out.put("normal_no_retry", () -> {
            test.reset();
            raises(ConnectionLostException.class, () -> test.dropOnce());
            eq(test.dropOnce(), 2, "second dropOnce");
        });

        out.put("concurrency", () -> {
            test.ice_ping(); // connect first: time the dispatch, not a handshake
            long start = System.nanoTime();
            List<CompletableFuture<Integer>> futures = new ArrayList<>();
            for(int i = 0; i < 4; ++i)
            {
                futures.add(test.sleepMsAsync(500));
            }
            for(CompletableFuture<Integer> f : futures)
            {
                eq(f.get(), 500, "result");
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            expect(elapsed < 1.5, "4 x sleepMs(500) took " + elapsed + "s: not dispatched concurrently");
        });

        out.put("bidir", () -> {
            ObjectAdapter adapter = comm.createObjectAdapter("");
            CallbackI cb = new CallbackI();
            adapter.add(cb, new Identity("cb", ""));
            adapter.activate();
            test.ice_getConnection().setAdapter(adapter);
            eq(test.callCallback("cb", 3, 4), 7, "callCallback");
            eq(cb.calls, 1, "callback calls");
        });
    }

    public static void main(String[] args)
    {
        if(args.length < 1)
        {
            System.err.println("usage: JavaClient <endpoint> [--only=a,b] [--Ice.Prop=value ...]");
            System.exit(2);
        }
        String endpoint = args[0];
        Set<String> only = null;
        List<String> rest = new ArrayList<>();
        for(int i = 1; i < args.length; ++i)
        {
            if(args[i].startsWith("--only="))
            {
                only = new HashSet<>(Arrays.asList(args[i].substring(7).split(",")));
            }
            else
            {
                rest.add(args[i]);
            }
        }
        InitializationData init = new InitializationData();
        init.properties = Util.createProperties(rest.toArray(new String[0]));
        init.properties.setProperty("Ice.Warn.Connections", "0");
        int passed = 0;
        int failed = 0;
        try(Communicator comm = Util.initialize(init))
        {
            LinkedHashMap<String, Body> all = new LinkedHashMap<>();
            checks(comm, endpoint, all);
            for(Map.Entry<String, Body> c : all.entrySet())
            {
                if(only != null && !only.contains(c.getKey()))
                {
                    continue;
                }
                String detail;
                try
                {
                    c.getValue().run();
                    System.out.println("PASS " + c.getKey());
                    passed += 1;
                    continue;
                }
                catch(CheckFailed e)
                {
                    detail = e.getMessage();
                }
                catch(com.zeroc.Ice.Exception e)
                {
                    detail = e.ice_id() + ": " + e;
                }
                catch(Throwable e)
                {
                    detail = e.toString();
                }
                System.out.println("FAIL " + c.getKey() + ": " + detail.replace('\n', ' '));
                failed += 1;
            }
        }
        System.out.println("SUMMARY " + passed + " passed, " + failed + " failed");
        System.out.flush();
        System.exit(failed == 0 ? 0 : 1);
    }
}
