// Ice C++11 bench client for Bench.ice, same CLI and JSON output as floe's
// bench_client (with "impl":"ice-cpp"):
//   bench_client PORT [WORKLOAD...] [--Ice.Prop=value...]
//   [--Bench.AdapterId=ADAPTER] [--Bench.Glacier2Router=PROXY] (see floe's)
// Calls tcp -h 127.0.0.1 -p PORT, or the endpoints of
// --Bench.Endpoints='ws -h 127.0.0.1 -p P' when given (ssl and wss with
// --Ice.Plugin.IceSSL=IceSSL:createIceSSL and --IceSSL.*).
#include <Ice/Ice.h>
#include <Glacier2/Router.h>
#include <Bench.h>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <iostream>
#include <mutex>
#include <thread>

using namespace std;
using Clock = chrono::steady_clock;

static double since(Clock::time_point s) { return chrono::duration<double>(Clock::now() - s).count(); }

static void report(const string& w, size_t calls, double seconds, double payload) {
    double us = seconds * 1e6 / (calls ? calls : 1);
    double mbit = seconds > 0 ? payload * 8.0 / seconds / 1e6 : 0.0;
    double callsPerSecond = seconds > 0 ? calls / seconds : 0.0;
    printf("{\"impl\":\"ice-cpp\",\"workload\":\"%s\",\"calls\":%zu,\"seconds\":%.6f,\"us_per_call\":%.3f,\"mbit_s\":%.3f,\"calls_s\":%.1f}\n",
           w.c_str(), calls, seconds, us, mbit, callsPerSecond);
    fflush(stdout);
}

// A bench call failed on an Ice thread: the run is void.
[[noreturn]] static void fail(const string& w, exception_ptr e) {
    try {
        rethrow_exception(e);
    } catch (const std::exception& ex) {
        cerr << "bench_client: " << w << ": " << ex.what() << endl;
    }
    _Exit(1);
}

// `o()` calls in total for pipelined_N and clients_N (floe's CONCURRENT_CALLS).
static const int CONCURRENT_CALLS = 100000;

// The shared state of a pipelined_N run; every callback holds a reference,
// so a callback still running when the run ends never touches freed memory.
struct Pipeline {
    string workload;
    shared_ptr<Bench::LatencyPrx> proxy;
    int total;
    atomic<int> started{0};
    mutex mu;
    condition_variable cv;
    int done = 0;
};

// Sends the next request of `p` unless all are sent; its reply sends the next.
static void issue(const shared_ptr<Pipeline>& p) {
    if (p->started.fetch_add(1) >= p->total) return;
    p->proxy->oAsync(
        [p] {
            bool last;
            {
                lock_guard<mutex> g(p->mu);
                last = ++p->done == p->total;
                if (last) p->cv.notify_one();
            }
            if (!last) issue(p);
        },
        [p](exception_ptr e) { fail(p->workload, e); });
}

// pipelined_N: `total` o() calls on one connection, `depth` in flight at any
// time (AMI: each reply's callback sends the next request).
static void pipelined(const string& w, const shared_ptr<Bench::LatencyPrx>& a, int depth, int total) {
    for (int i = 0; i < 1000; ++i) a->o();
    auto p = make_shared<Pipeline>();
    p->workload = w;
    p->proxy = a;
    p->total = total;
    auto s = Clock::now();
    for (int i = 0; i < depth; ++i) issue(p);
    unique_lock<mutex> g(p->mu);
    p->cv.wait(g, [&] { return p->done == total; });
    report(w, total, since(s), 0);
}

// clients_N: N connections (ice_connectionId), one thread each calling o() in
// a loop; `total` calls in all.
static void clients(const string& w, const shared_ptr<Bench::LatencyPrx>& a, int n, int total) {
    vector<shared_ptr<Bench::LatencyPrx>> proxies;
    for (int i = 0; i < n; ++i) {
        auto p = a->ice_connectionId("c" + to_string(i));
        for (int k = 0; k < 100; ++k) p->o();
        proxies.push_back(p);
    }
    int each = total / n > 0 ? total / n : 1;
    atomic<bool> go{false};
    atomic<int> ready{0};
    vector<thread> threads;
    for (int i = 0; i < n; ++i) {
        threads.emplace_back([&, i] {
            ready++;
            while (!go.load()) this_thread::yield();
            try {
                for (int k = 0; k < each; ++k) proxies[i]->o();
            } catch (...) {
                fail(w, current_exception());
            }
        });
    }
    while (ready.load() < n) this_thread::yield();
    auto s = Clock::now();
    go = true;
    for (auto& t : threads) t.join();
    report(w, size_t(each) * n, since(s), 0);
}

// The N of `prefix_N`, or 0 when `w` is not such a workload.
static int suffixCount(const string& w, const string& prefix) {
    if (w.compare(0, prefix.size(), prefix) != 0) return 0;
    int n = atoi(w.c_str() + prefix.size());
    return n > 0 ? n : 0;
}

// BENCH_SCALE (default 1): a factor on every call count, as in floe's client.
static double benchScale() {
    const char* s = getenv("BENCH_SCALE");
    if (!s) return 1.0;
    char* end = nullptr;
    double f = strtod(s, &end);
    if (end == s || !(f > 0) || f > 1e9) {
        cerr << "bench: BENCH_SCALE must be a positive number, not `" << s << "`" << endl;
        exit(2);
    }
    return f;
}

static int scaled(int n, double scale) {
    long v = lround(n * scale);
    return v < 1 ? 1 : static_cast<int>(v);
}

// Untimed calls before each bulk and oneway workload (floe's WARM_UP_CALLS).
static const int WARM_UP_CALLS = 10;
// 500,000-byte calls per byteseq_* run (the same in every bench client).
static const int BYTESEQ_CALLS = 2000;

static Bench::ByteSeq pattern(size_t n) {
    Bench::ByteSeq v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<Ice::Byte>(i);
    return v;
}

static Bench::DataMessage makeData(size_t size) {
    size_t signals = size / 400 ? size / 400 : 1;
    Bench::DataMessage m;
    m.name = "codac";
    m.id = 1;
    m.signalCount = static_cast<int>(signals);
    m.sampleCount = 100;
    for (int i = 0; i < 100; ++i) m.times.push_back(static_cast<float>(i));
    for (size_t s = 0; s < signals; ++s) {
        Bench::SignalData d;
        d.name = "signal" + to_string(s);
        for (int i = 0; i < 100; ++i) d.samples.push_back(static_cast<float>(s * 100 + i));
        m.signals.push_back(d);
    }
    return m;
}

static vector<string> allWorkloads() {
    vector<string> w = {"latency", "oneway", "batch", "byteseq_send", "byteseq_recv", "fixed_send",
                        "fixed_recv", "strdbl_send", "strdbl_recv"};
    for (auto k : {"bytes", "floats", "data"})
        for (auto way : {"oneway", "twoway"})
            for (auto size : {"10000", "100000", "1000000", "10000000"})
                w.push_back(string("codac_") + k + "_" + way + "_" + size);
    for (auto kind : {"pipelined_", "clients_"})
        for (auto n : {"1", "4", "16", "64"})
            w.push_back(string(kind) + n);
    return w;
}

int main(int argc, char* argv[]) {
    try {
        Ice::InitializationData init;
        init.properties = Ice::createProperties(argc, argv);
        if (init.properties->getProperty("Ice.MessageSizeMax").empty()) {
            init.properties->setProperty("Ice.MessageSizeMax", "102400");
        }
        auto args = init.properties->parseCommandLineOptions("", Ice::argsToStringSeq(argc, argv));
        if (args.size() < 2) {
            cerr << "usage: bench_client PORT [WORKLOAD...]" << endl;
            return 2;
        }
        string port = args[1];
        vector<string> workloads(args.begin() + 2, args.end());
        if (workloads.empty()) workloads = allWorkloads();
        Ice::CommunicatorHolder ich(init);
        auto c = ich.communicator();
        auto ep = ":" + init.properties->getPropertyWithDefault("Bench.Endpoints", "tcp -h 127.0.0.1 -p " + port);
        // Bench.AdapterId: indirect proxies (id@adapter, Ice.Default.Locator);
        // Bench.Glacier2Router: routed through a Glacier2 session.
        string adapterId = c->getProperties()->getProperty("Bench.AdapterId");
        string routerStr = c->getProperties()->getProperty("Bench.Glacier2Router");
        shared_ptr<Glacier2::RouterPrx> router;
        if (!routerStr.empty()) {
            router = Ice::uncheckedCast<Glacier2::RouterPrx>(c->stringToProxy(routerStr));
            router->createSession("bench", "bench");
        }
        auto proxy = [&](const string& id) {
            auto p = c->stringToProxy(adapterId.empty() ? id + ep : id + "@" + adapterId);
            return router ? p->ice_router(router) : p;
        };
        auto a = Ice::uncheckedCast<Bench::LatencyPrx>(proxy("a"));
        auto t = Ice::uncheckedCast<Bench::ThroughputPrx>(proxy("t"));
        auto m = Ice::uncheckedCast<Bench::MessagesPrx>(proxy("m"));
        const double scale = benchScale();
        // Runs `call` WARM_UP_CALLS times untimed, then `n` times timed, then
        // `sync` (a twoway call after oneways), and reports.
        auto bulk = [&](const string& w, int n, double payload, const function<void()>& call,
                        const function<void()>& sync) {
            for (int i = 0; i < WARM_UP_CALLS && i < n; ++i) call();
            sync();
            auto s = Clock::now();
            for (int i = 0; i < n; ++i) call();
            sync();
            report(w, n, since(s), double(n) * payload);
        };
        auto none = [] {};
        for (const auto& w : workloads) {
            if (w == "latency") {
                for (int i = 0; i < 1000; ++i) a->o();
                int n = scaled(100000, scale);
                auto s = Clock::now();
                for (int i = 0; i < n; ++i) a->o();
                report(w, n, since(s), 0);
            } else if (w == "oneway" || w == "batch") {
                bool batch = w == "batch";
                auto p = batch ? a->ice_batchOneway() : a->ice_oneway();
                for (int i = 0; i < WARM_UP_CALLS; ++i) p->o();
                if (batch) p->ice_flushBatchRequests();
                a->o();
                int n = scaled(100000, scale);
                auto s = Clock::now();
                for (int i = 0; i < n; ++i) {
                    p->o();
                    if (batch && (i + 1) % 1000 == 0) p->ice_flushBatchRequests();
                }
                if (batch) p->ice_flushBatchRequests();
                a->o();
                report(w, n, since(s), 0);
            } else if (w == "byteseq_send") {
                auto v = pattern(500000);
                pair<const Ice::Byte*, const Ice::Byte*> r(v.data(), v.data() + v.size());
                bulk(w, scaled(BYTESEQ_CALLS, scale), 500000, [&] { t->sendByteSeq(r); }, none);
            } else if (w == "byteseq_recv") {
                bulk(w, scaled(BYTESEQ_CALLS, scale), 500000, [&] { t->recvByteSeq(500000); }, none);
            } else if (w == "fixed_send") {
                Bench::FixedSeq v(50000);
                for (int i = 0; i < 50000; ++i) v[i] = Bench::Fixed{i, 2 * i, i * 0.5};
                bulk(w, scaled(30, scale), 50000 * 16, [&] { t->sendFixedSeq(v); }, none);
            } else if (w == "fixed_recv") {
                bulk(w, scaled(30, scale), 50000 * 16, [&] { t->recvFixedSeq(50000); }, none);
            } else if (w == "strdbl_send") {
                Bench::StringDoubleSeq v(50000, Bench::StringDouble{"hello", 3.14});
                bulk(w, scaled(30, scale), 50000 * 14, [&] { t->sendStringDoubleSeq(v); }, none);
            } else if (w == "strdbl_recv") {
                bulk(w, scaled(30, scale), 50000 * 14, [&] { t->recvStringDoubleSeq(50000); }, none);
            } else if (int depth = suffixCount(w, "pipelined_")) {
                pipelined(w, a, depth, scaled(CONCURRENT_CALLS, scale));
            } else if (int n = suffixCount(w, "clients_")) {
                clients(w, a, n, scaled(CONCURRENT_CALLS, scale));
            } else if (w == "shutdown") {
                t->shutdown();
            } else if (w.compare(0, 6, "codac_") == 0) {
                auto p1 = w.find('_', 6);
                auto p2 = w.find('_', p1 + 1);
                string kind = w.substr(6, p1 - 6), way = w.substr(p1 + 1, p2 - p1 - 1);
                size_t size = stoul(w.substr(p2 + 1));
                // The same counts as codac_calls() in benches/programs/src/lib.rs.
                int reps = scaled(size <= 10000 ? 10000 : size <= 100000 ? 2000 : size <= 1000000 ? 500 : 50, scale);
                bool one = way == "oneway";
                auto mp = one ? m->ice_oneway() : m;
                Bench::ByteSeq bytes;
                Bench::FloatSeq floats;
                Bench::DataMessage data;
                if (kind == "bytes") bytes = pattern(size);
                else if (kind == "floats") for (size_t i = 0; i < size / 4; ++i) floats.push_back(static_cast<float>(i));
                else data = makeData(size);
                auto call = [&] {
                    if (kind == "bytes") { if (one) mp->publishBytesOneWay(bytes); else mp->publishBytesTwoWay(bytes); }
                    else if (kind == "floats") { if (one) mp->publishFloatsOneWay(floats); else mp->publishFloatsTwoWay(floats); }
                    else { if (one) mp->publishDataOneWay(data); else mp->publishDataTwoWay(data); }
                };
                bulk(w, reps, double(size), call, [&] { if (one) m->ice_ping(); });
            } else {
                cerr << "bench_client: unknown workload `" << w << "`" << endl;
                return 2;
            }
        }
    } catch (const std::exception& e) {
        cerr << "bench_client: " << e.what() << endl;
        return 1;
    }
    return 0;
}
