// Ice C++11 bench client for Bench.ice, same CLI and JSON output as floe's
// bench_client (with "impl":"ice-cpp"):
//   bench_client PORT [WORKLOAD...] [--Ice.Prop=value...]
//   [--Bench.AdapterId=ADAPTER] [--Bench.Glacier2Router=PROXY] (see floe's)
#include <Ice/Ice.h>
#include <Glacier2/Router.h>
#include <Bench.h>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <iostream>

using namespace std;
using Clock = chrono::steady_clock;

static void report(const string& w, size_t calls, double seconds, double payload) {
    double us = seconds * 1e6 / (calls ? calls : 1);
    double mbit = seconds > 0 ? payload * 8.0 / seconds / 1e6 : 0.0;
    printf("{\"impl\":\"ice-cpp\",\"workload\":\"%s\",\"calls\":%zu,\"seconds\":%.6f,\"us_per_call\":%.3f,\"mbit_s\":%.3f}\n",
           w.c_str(), calls, seconds, us, mbit);
    fflush(stdout);
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

static double since(Clock::time_point s) { return chrono::duration<double>(Clock::now() - s).count(); }

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
        auto ep = ":tcp -h 127.0.0.1 -p " + port;
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
            } else if (w == "shutdown") {
                t->shutdown();
            } else if (w.compare(0, 6, "codac_") == 0) {
                auto p1 = w.find('_', 6);
                auto p2 = w.find('_', p1 + 1);
                string kind = w.substr(6, p1 - 6), way = w.substr(p1 + 1, p2 - p1 - 1);
                size_t size = stoul(w.substr(p2 + 1));
                // The same counts as codac_calls() in examples/bench_common/mod.rs.
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
