// Ice 3.7 JavaScript (Node) client of the floe interop suite: the same checks,
// names and output as py_client.py.
//
//     node node_client.js <generated-dir> "<endpoint>" [--only=name,name]
//
// <generated-dir> holds Interop.js (slice2js) and node_modules/ice. Prints
// "PASS <name>", "FAIL <name>: <detail>" or "SKIP <name>: <why>" per check, then
// "SUMMARY <passed> passed, <failed> failed"; exit status 0 only if none failed.
"use strict";

const path = require("path");
const genDir = path.resolve(process.argv[2]);
module.paths.unshift(path.join(genDir, "node_modules"));

// Ice for JavaScript's ws transport is a browser's: its WSTransceiver.js is
// defined only when a global WebSocket exists when it loads, and reads
// navigator.userAgent then. Without them a ws endpoint has no connector
// (Ice::NoEndpointException). Node before 22 has neither global, so for a
// ws/wss endpoint this client provides them before loading Ice: the npm
// package `ws` (the WebSocket API: binaryType "arraybuffer", onmessage,
// bufferedAmount) and a navigator with a user agent, as a Node user would.
if (/^wss?\b/.test(process.argv[3] || "")) {
    if (typeof globalThis.WebSocket === "undefined") {
        globalThis.WebSocket = require("ws");
    }
    if (typeof globalThis.navigator === "undefined") {
        globalThis.navigator = { userAgent: "Node.js/" + process.version };
    }
}

const Ice = require("ice").Ice;
const Interop = require(path.join(genDir, "Interop.js")).Interop;

class CheckFailed extends Error {}

function expect(cond, detail) {
    if (!cond) {
        throw new CheckFailed(detail);
    }
}

function show(v) {
    if (v instanceof Ice.Long) {
        return "Long(" + v.toString() + ")";
    }
    if (v instanceof Map) {
        return "Map(" + JSON.stringify([...v.entries()].map(([k, x]) => [show(k), show(x)])) + ")";
    }
    try {
        return JSON.stringify(v);
    } catch (e) {
        return String(v);
    }
}

// Deep equality over the JS mapping's values (Long, Uint8Array, Map, structs, enums).
function deq(a, b) {
    if (a === b) {
        return true;
    }
    if (typeof a === "number" && typeof b === "number") {
        return Object.is(a, b) || a === b;
    }
    if (a instanceof Ice.Long || b instanceof Ice.Long) {
        return a instanceof Ice.Long && a.equals(b);
    }
    if (a === null || b === null || a === undefined || b === undefined) {
        return false;
    }
    if (ArrayBuffer.isView(a) || Array.isArray(a)) {
        if (!(ArrayBuffer.isView(b) || Array.isArray(b)) || a.length !== b.length) {
            return false;
        }
        for (let i = 0; i < a.length; ++i) {
            if (!deq(a[i], b[i])) {
                return false;
            }
        }
        return true;
    }
    if (a instanceof Map) {
        if (!(b instanceof Map) || a.size !== b.size) {
            return false;
        }
        for (const [k, v] of a) {
            if (!b.has(k) || !deq(v, b.get(k))) {
                return false;
            }
        }
        return true;
    }
    if (typeof a === "object" && typeof b === "object") {
        if (a.constructor !== b.constructor) {
            return false;
        }
        const ka = Object.keys(a);
        if (ka.length !== Object.keys(b).length) {
            return false;
        }
        return ka.every(k => deq(a[k], b[k]));
    }
    return false;
}

function eq(got, want, what) {
    if (!deq(got, want)) {
        throw new CheckFailed(what + ": got " + show(got) + ", want " + show(want));
    }
}

async function raises(type, fn) {
    try {
        await fn();
    } catch (e) {
        if (e instanceof type) {
            return e;
        }
        const name = e && e.ice_id ? e.ice_id() : String(e);
        throw new CheckFailed("expected " + type.name + ", got " + name);
    }
    throw new CheckFailed("expected " + type.name + ", got no exception");
}

function sleep(ms) {
    return new Promise(resolve => setTimeout(resolve, ms));
}

async function waitTotal(test, want) {
    const deadline = Date.now() + 5000;
    let total = await test.getOnewayTotal();
    while (total !== want && Date.now() < deadline) {
        await sleep(20);
        total = await test.getOnewayTotal();
    }
    eq(total, want, "oneway total");
}

class CallbackI extends Interop.Callback {
    constructor() {
        super();
        this.calls = 0;
    }

    add(a, b, current) {
        this.calls += 1;
        return a + b;
    }
}

function mixed(name, weight, flag, values) {
    return new Interop.Mixed(name, weight, flag, values);
}

const L = n => new Ice.Long(n);
const LONG_MIN = new Ice.Long(0x80000000, 0);
const LONG_MAX = new Ice.Long(0x7fffffff, 0xffffffff);
const FLT_MAX = 3.4028234663852886e38;

function checks(comm, endpoint) {
    const test = Interop.TestPrx.uncheckedCast(comm.stringToProxy("test:" + endpoint));
    const out = [];
    const check = (name, fn) => out.push([name, fn]);

    check("ping", async () => {
        await test.ice_ping();
    });

    check("is_a", async () => {
        expect(await test.ice_isA("::Interop::Test"), "ice_isA(::Interop::Test) is false");
        expect(!(await test.ice_isA("::Interop::Callback")), "ice_isA(::Interop::Callback) is true");
    });

    check("ids", async () => {
        eq(await test.ice_ids(), ["::Ice::Object", "::Interop::Test"], "ice_ids");
        eq(await test.ice_id(), "::Interop::Test", "ice_id");
    });

    check("prims", async () => {
        const s = "h\u00e9llo \u20ac";
        const r = await test.opPrims(true, 200, -2, 0x01020304, L(-1234567890123), 1.5, -2.25, s);
        eq(r, [s, true, 200, -2, 0x01020304, L(-1234567890123), 1.5, -2.25], "opPrims");
    });

    check("prims_extremes", async () => {
        const big = "x".repeat(300) + "\u{1F600}";
        let r = await test.opPrims(false, 0, -32768, -2147483648, LONG_MIN, -FLT_MAX, 1e308, big);
        eq(r, [big, false, 0, -32768, -2147483648, LONG_MIN, -FLT_MAX, 1e308], "opPrims min");
        r = await test.opPrims(true, 255, 32767, 2147483647, LONG_MAX, FLT_MAX, -1e-300, "");
        eq(r, ["", true, 255, 32767, 2147483647, LONG_MAX, FLT_MAX, -1e-300], "opPrims max");
    });

    check("byte_seq", async () => {
        eq(await test.opByteSeq(new Uint8Array(0)), new Uint8Array(0), "empty");
        eq(await test.opByteSeq(new Uint8Array([1, 2, 3])), new Uint8Array([1, 2, 3]), "small");
        const data = new Uint8Array(500000);
        for (let i = 0; i < data.length; ++i) {
            data[i] = (i * 31 + 7) % 256;
        }
        expect(deq(await test.opByteSeq(data), data), "500000-byte echo differs");
    });

    check("seqs", async () => {
        const ints = [];
        for (let i = -150; i < 150; ++i) {
            ints.push(i);
        }
        const v = new Interop.Seqs([true, false, true], new Uint8Array([0, 1, 255]), [-1, 2, 32767], ints,
                                   [L(2 ** 40), L(-5)], [0.5, -1.25], [3.125, -1e300], ["a", "", "h\u00e9"],
                                   [["x"], [], ["y", "z"]]);
        const r = await test.opSeqs(v);
        for (const k of Object.keys(v)) {
            eq(r[k], v[k], k);
        }
    });

    check("dicts", async () => {
        const a = new Map([["one", 1], ["two", 2], ["neg", -3]]);
        const b = new Map([[1, "a"], [-7, "b"]]);
        const c = new Map([["m", mixed("n", 0.5, true, [1, 2])], ["e", mixed("", 0.0, false, [])]]);
        const [r, ob, oc] = await test.opDicts(a, b, c);
        eq(r, a, "return");
        eq(ob, b, "ob");
        eq(oc, c, "oc");
    });

    check("enums", async () => {
        const C = Interop.Color;
        let [r, os, ocs] = await test.opEnums(C.Blue, Interop.Sparse.C, [C.Red, C.Green, C.Blue]);
        expect(r === C.Blue, "return");
        expect(os === Interop.Sparse.C, "os");
        expect(ocs.length === 3 && ocs[0] === C.Red && ocs[1] === C.Green && ocs[2] === C.Blue, "ocs");
        [r, os, ocs] = await test.opEnums(C.Red, Interop.Sparse.A, []);
        expect(r === C.Red && os === Interop.Sparse.A && ocs.length === 0, "second call");
    });

    check("structs", async () => {
        const p = new Interop.Point(1, -2);
        const m = mixed("mix", 2.5, true, [1, 2, 3]);
        const n = new Interop.Nested(new Interop.Point(3, 4), mixed("inner", -0.5, false, []), new Map([["k", 1]]),
                                     Interop.Color.Green, [new Interop.Point(5, 6), new Interop.Point(7, 8)]);
        const ps = [new Interop.Point(1, 2), new Interop.Point(3, 4), new Interop.Point(-5, 6)];
        const ms = [mixed("a", 1.0, false, [9]), mixed("", 0.0, true, [])];
        const [rn, op, om, ops, oms] = await test.opStructs(p, m, n, ps, ms);
        eq(rn, n, "return");
        eq(op, p, "op");
        eq(om, m, "om");
        eq(ops, ps, "ops");
        eq(oms, ms, "oms");
    });

    check("optionals_set", async () => {
        const m = mixed("o", 1.0, true, [4]);
        const r = await test.opOptional(1, 5, "s", new Interop.Point(1, 2), [1, 2, 3], m, Interop.Color.Blue, true);
        eq(r, [5, "s", new Interop.Point(1, 2), [1, 2, 3], m, Interop.Color.Blue, true], "results");
    });

    check("optionals_unset", async () => {
        const u = undefined;
        let r = await test.opOptional(0, u, u, u, u, u, u, u);
        expect(r.every(x => x === undefined), "expected all unset, got " + show(r));
        r = await test.opOptional(2, 9, u, u, u, u, u, false);
        eq(r[0], 9, "return");
        expect(r.slice(1, 6).every(x => x === undefined), "expected unset outs, got " + show(r));
        eq(r[6], false, "obb");
    });

    check("class_base", async () => {
        const r = await test.opBase(new Interop.Base(5));
        expect(r !== null && r.constructor === Interop.Base, "type");
        eq(r.a, 5, "a");
    });

    check("class_derived", async () => {
        const r = await test.opBase(new Interop.Derived(6, "d"));
        expect(r !== null && r.constructor === Interop.Derived, "type");
        eq([r.a, r.s], [6, "d"], "members");
    });

    check("class_null", async () => {
        expect((await test.opBase(null)) === null, "null class did not come back null");
    });

    check("class_graph_cycle", async () => {
        const n1 = new Interop.Node(1, null);
        const n2 = new Interop.Node(2, n1);
        n1.next = n2;
        const r = await test.opGraph(n1);
        eq([r.v, r.next.v], [1, 2], "values");
        expect(r.next.next === r, "cycle not preserved");
    });

    check("class_shared", async () => {
        const b = new Interop.Base(9);
        let r = await test.opPair(new Interop.Pair(b, b));
        expect(r.x === r.y, "shared instance came back as two instances");
        eq(r.x.a, 9, "x.a");
        r = await test.opPair(new Interop.Pair(new Interop.Base(1), new Interop.Derived(2, "z")));
        expect(r.y.constructor === Interop.Derived, "y type");
        eq([r.x.a, r.y.a, r.y.s], [1, 2, "z"], "members");
    });

    check("class_optional_members", async () => {
        let r = await test.opWithOpt(new Interop.WithOpt(1, 2, "z"));
        eq([r.a, r.b, r.s], [1, 2, "z"], "set");
        r = await test.opWithOpt(new Interop.WithOpt(3));
        eq(r.a, 3, "a");
        expect(r.b === undefined && r.s === undefined, "expected unset members");
    });

    check("class_unknown_sliced", async () => {
        const r = await test.getUnknownClass();
        expect(r !== null && r.constructor === Interop.Derived, "type");
        eq([r.a, r.s], [7, "known"], "members");
    });

    check("exc_base", async () => {
        const e = await raises(Interop.BaseErr, () => test.throwErr(1));
        expect(e.constructor === Interop.BaseErr, "type");
        eq(e.reason, "base", "reason");
    });

    check("exc_derived", async () => {
        const e = await raises(Interop.DerivedErr, () => test.throwErr(2));
        eq([e.reason, e.code], ["derived", 42], "members");
    });

    check("exc_none", async () => {
        await test.throwErr(0);
    });

    check("exc_sliced_known", async () => {
        const e = await raises(Interop.DerivedErr, () => test.throwSliced(1));
        eq([e.reason, e.code], ["sliced", 43], "members");
    });

    check("exc_sliced_unknown", async () => {
        const e = await raises(Interop.DerivedErr, () => test.throwSliced(2));
        expect(e.constructor === Interop.DerivedErr, "type");
        eq([e.reason, e.code], ["secret", 44], "members");
    });

    check("exc_undeclared", async () => {
        const e = await raises(Ice.UnknownUserException, () => test.throwUndeclared());
        expect(e.unknown.indexOf("Interop::BaseErr") >= 0, "unknown = " + e.unknown);
    });

    check("exc_non_ice", async () => {
        await raises(Ice.UnknownException, () => test.throwNonIce());
    });

    check("object_not_exist", async () => {
        const missing = Interop.TestPrx.uncheckedCast(comm.stringToProxy("missing:" + endpoint));
        const e = await raises(Ice.ObjectNotExistException, () => missing.ice_ping());
        eq(e.id.name, "missing", "id");
        await raises(Ice.ObjectNotExistException, () => missing.getFacet());
    });

    check("facet_not_exist", async () => {
        await raises(Ice.FacetNotExistException, () => test.ice_facet("nope").ice_ping());
    });

    check("operation_not_exist", async () => {
        const u = Interop.UnimplementedPrx.uncheckedCast(test);
        const e = await raises(Ice.OperationNotExistException, () => u.missing());
        eq(e.operation, "missing", "operation");
    });

    check("proxy_param", async () => {
        const p = comm.stringToProxy("cat/id -f fac -o:tcp -h 127.0.0.1 -p 12345 -t 500");
        const r = await test.opProxy(p);
        eq(comm.proxyToString(r), comm.proxyToString(p), "proxy");
        expect((await test.opProxy(null)) === null, "null proxy did not come back null");
        const back = Interop.TestPrx.uncheckedCast(await test.opProxy(test.ice_facet("facetA")));
        eq(await back.getFacet(), "facetA", "call through returned proxy");
    });

    check("facets", async () => {
        eq(await test.getFacet(), "", "default facet");
        eq(await Interop.TestPrx.uncheckedCast(test.ice_facet("facetA")).getFacet(), "facetA", "facetA");
    });

    check("context", async () => {
        eq(await test.getContext(), new Map(), "empty");
        const ctx = new Map([["a", "b"], ["k", "v"]]);
        eq(await test.getContext(ctx), ctx, "per call");
        const pctx = new Map([["p", "q"]]);
        eq(await test.ice_context(pctx).getContext(), pctx, "proxy context");
    });

    check("oneway", async () => {
        await test.reset();
        const ow = test.ice_oneway();
        for (let n = 1; n <= 5; ++n) {
            await ow.onewayAdd(n);
        }
        await waitTotal(test, 15);
    });

    check("batch_oneway", async () => {
        await test.reset();
        const b = test.ice_batchOneway();
        b.onewayAdd(10);
        b.onewayAdd(20);
        await sleep(200);
        eq(await test.getOnewayTotal(), 0, "total before flush");
        await b.ice_flushBatchRequests();
        await waitTotal(test, 30);
    });

    check("compress", null); // Ice for JavaScript has no compression support.

    check("idempotent_retry", async () => {
        await test.reset();
        eq(await test.idemDropOnce(), 2, "idemDropOnce");
    });

    check("normal_no_retry", async () => {
        await test.reset();
        await raises(Ice.ConnectionLostException, () => test.dropOnce());
        eq(await test.dropOnce(), 2, "second dropOnce");
    });

    check("concurrency", async () => {
        await test.ice_ping(); // connect first: time the dispatch, not a handshake
        const start = Date.now();
        const results = await Promise.all([0, 1, 2, 3].map(() => test.sleepMs(500)));
        const elapsed = (Date.now() - start) / 1000;
        eq(results, [500, 500, 500, 500], "results");
        expect(elapsed < 1.5, "4 x sleepMs(500) took " + elapsed + "s: not dispatched concurrently");
    });

    check("bidir", async () => {
        const adapter = await comm.createObjectAdapter("");
        const cb = new CallbackI();
        adapter.add(cb, new Ice.Identity("cb", ""));
        const conn = await test.ice_getConnection();
        conn.setAdapter(adapter);
        eq(await test.callCallback("cb", 3, 4), 7, "callCallback");
        eq(cb.calls, 1, "callback calls");
    });

    return out;
}

async function main() {
    const args = process.argv.slice(3);
    if (args.length < 1) {
        console.error("usage: node node_client.js <generated-dir> <endpoint> [--only=a,b]");
        return 2;
    }
    const endpoint = args[0];
    let only = null;
    for (const a of args.slice(1)) {
        if (a.startsWith("--only=")) {
            only = new Set(a.substring(7).split(","));
        }
    }
    const init = new Ice.InitializationData();
    init.properties = Ice.createProperties();
    init.properties.setProperty("Ice.Warn.Connections", "0");
    const comm = Ice.initialize(init);
    let passed = 0;
    let failed = 0;
    try {
        for (const [name, fn] of checks(comm, endpoint)) {
            if (only !== null && !only.has(name)) {
                continue;
            }
            if (fn === null) {
                console.log("SKIP " + name + ": not supported by Ice for JavaScript");
                continue;
            }
            try {
                await fn();
                console.log("PASS " + name);
                passed += 1;
            } catch (e) {
                let detail;
                if (e instanceof CheckFailed) {
                    detail = e.message;
                } else if (e && e.ice_id) {
                    detail = e.ice_id() + ": " + e.toString();
                } else {
                    detail = String(e && e.stack ? e.stack : e);
                }
                console.log("FAIL " + name + ": " + detail.replace(/\n/g, " | "));
                failed += 1;
            }
        }
    } finally {
        await comm.destroy();
    }
    console.log("SUMMARY " + passed + " passed, " + failed + " failed");
    return failed === 0 ? 0 : 1;
}

main().then(code => process.exit(code), e => {
    console.log("FAIL main: " + e);
    console.log("SUMMARY 0 passed, 1 failed");
    process.exit(1);
});
