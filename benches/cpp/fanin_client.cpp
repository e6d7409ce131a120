// Ice C++11 fan-in client for `cargo xtask compare --fanin`: the same
// command line, workloads, counts, timing and JSON line as floe's
// benches/programs/src/bin/fanin_client.rs (see benches/programs/src/fanin.rs), written
// against Ice for C++ 3.7 and IceStorm's own C++ API:
//
//   fanin_client TOPIC_MANAGER IMPL [WORKLOAD...] [--Ice.Prop=value...]
//
// - 4 publishers, each with its own communicator (its own connection to
//   the broker) and its own thread, publish `Bench::Messages` events with
//   the oneway proxy `topic->getPublisher()->ice_oneway()`.
// - 1 subscriber: an ordinary `Bench::Messages` servant on a communicator
//   and object adapter of its own (Ice's default thread pools), subscribed
//   with `subscribeAndGetPublisher(QoS{}, proxy->ice_oneway())`; the
//   generated code decodes every event before the servant counts it.
// - Each publisher first sends 5 untimed warm-up events; once all of them
//   have arrived the timed phase starts. It ends at the last event
//   received, when every event has arrived or nothing arrived for
//   FANIN_DRAIN_MS (default 3000); lost = sent - received.
//
// Events per publisher: 10,000 (10 KB), 1,500 (100 KB) or 150 (1 MB),
// times BENCH_SCALE (default 1, rounded, at least 1); FANIN_EVENTS, when
// set, is the count per publisher instead (BENCH_SCALE not applied), so a
// run can burst any number of events. Events carry no sequence number (nor
// do floe's client's), so the order of arrival is not checked.
//
// Output, one line per workload:
// {"impl":..,"workload":..,"calls":..,"seconds":..,"us_per_call":..,
//  "mbit_s":..,"mb_s":..,"sent":..,"received":..,"lost":..}
#include <Ice/Ice.h>
#include <IceStorm/IceStorm.h>
#include <Bench.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace std;
using Clock = chrono::steady_clock;

static const int PUBLISHERS = 4;
static const int WARM_UP = 5;

// What the subscriber has received since the last reset.
struct Received {
    atomic<uint64_t> messages{0};
    // When the last event arrived, in ns since `epoch`.
    atomic<int64_t> last{0};
    const Clock::time_point epoch = Clock::now();

    int64_t now() const { return chrono::duration_cast<chrono::nanoseconds>(Clock::now() - epoch).count(); }

    void count() {
        messages.fetch_add(1, memory_order_relaxed);
        int64_t t = now();
        int64_t seen = last.load(memory_order_relaxed);
        while (seen < t && !last.compare_exchange_weak(seen, t, memory_order_relaxed)) {
        }
    }
};

// The subscriber servant: counts what the generated code has decoded.
class Subscriber : public Bench::Messages {
public:
    explicit Subscriber(shared_ptr<Received> r) : _r(move(r)) {}
    void publishBytesOneWay(Bench::ByteSeq, const Ice::Current&) override { _r->count(); }
    int publishBytesTwoWay(Bench::ByteSeq m, const Ice::Current&) override {
        _r->count();
        return static_cast<int>(m.size());
    }
    void publishFloatsOneWay(Bench::FloatSeq, const Ice::Current&) override { _r->count(); }
    int publishFloatsTwoWay(Bench::FloatSeq m, const Ice::Current&) override {
        _r->count();
        return static_cast<int>(m.size());
    }
    void publishDataOneWay(Bench::DataMessage, const Ice::Current&) override { _r->count(); }
    int publishDataTwoWay(Bench::DataMessage m, const Ice::Current&) override {
        _r->count();
        return static_cast<int>(m.signals.size());
    }

private:
    shared_ptr<Received> _r;
};

struct Workload {
    string kind;  // bytes, floats or data
    size_t size;  // payload bytes per event

    string name() const { return "fanin_" + kind + "_" + to_string(size); }
};

static bool parseWorkload(const string& name, Workload& w) {
    if (name.compare(0, 6, "fanin_") != 0) return false;
    auto sep = name.find('_', 6);
    if (sep == string::npos) return false;
    w.kind = name.substr(6, sep - 6);
    if (w.kind != "bytes" && w.kind != "floats" && w.kind != "data") return false;
    const string size = name.substr(sep + 1);
    if (size.empty() || size.find_first_not_of("0123456789") != string::npos) return false;
    w.size = stoul(size);
    return true;
}

static vector<string> allWorkloads() {
    vector<string> w;
    for (auto k : {"bytes", "floats", "data"})
        for (auto s : {"10000", "100000", "1000000"}) w.push_back(string("fanin_") + k + "_" + s);
    return w;
}

// A positive number from the environment, or `fallback` when unset.
static double envNumber(const char* name, double fallback) {
    const char* s = getenv(name);
    if (!s) return fallback;
    char* end = nullptr;
    double f = strtod(s, &end);
    if (end == s || !(f > 0) || f > 1e12) {
        cerr << "fanin_client: " << name << " must be a positive number, not `" << s << "`" << endl;
        exit(2);
    }
    return f;
}

// Events per publisher: FANIN_EVENTS, or the default count times BENCH_SCALE.
static uint64_t eventsPerPublisher(size_t size) {
    if (getenv("FANIN_EVENTS")) return static_cast<uint64_t>(llround(envNumber("FANIN_EVENTS", 1)));
    uint64_t n = size <= 10000 ? 10000 : size <= 100000 ? 1500 : 150;
    long long v = llround(double(n) * envNumber("BENCH_SCALE", 1.0));
    return v < 1 ? 1 : static_cast<uint64_t>(v);
}

static Bench::ByteSeq pattern(size_t n) {
    Bench::ByteSeq v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<Ice::Byte>(i);
    return v;
}

// The same message as benches/programs/src/lib.rs's make_data_message.
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

// One payload, built once and published many times.
struct Payload {
    string kind;
    Bench::ByteSeq bytes;
    Bench::FloatSeq floats;
    Bench::DataMessage data;

    explicit Payload(const Workload& w) : kind(w.kind) {
        if (kind == "bytes") bytes = pattern(w.size);
        else if (kind == "floats")
            for (size_t i = 0; i < w.size / 4; ++i) floats.push_back(static_cast<float>(i));
        else data = makeData(w.size);
    }

    void publish(const shared_ptr<Bench::MessagesPrx>& p) const {
        if (kind == "bytes") p->publishBytesOneWay(bytes);
        else if (kind == "floats") p->publishFloatsOneWay(floats);
        else p->publishDataOneWay(data);
    }
};

// Waits until `r` has `want` events or nothing arrived for `drain`.
static uint64_t waitFor(const Received& r, uint64_t want, chrono::milliseconds drain) {
    uint64_t last = r.messages.load();
    auto since = Clock::now();
    for (;;) {
        uint64_t now = r.messages.load();
        if (now >= want) return now;
        if (now != last) {
            last = now;
            since = Clock::now();
        } else if (Clock::now() - since >= drain) {
            return now;
        }
        this_thread::sleep_for(chrono::milliseconds(1));
    }
}

struct Result {
    uint64_t sent = 0, received = 0, bytes = 0;
    double seconds = 0;
};

static Ice::InitializationData initData(const Ice::PropertiesPtr& props) {
    Ice::InitializationData init;
    init.properties = props->clone();
    return init;
}

// Destroys the publishers' communicators, the topic and the subscriber's
// adapter however a run ends.
struct Cleanup {
    vector<shared_ptr<Ice::Communicator>> comms;
    shared_ptr<IceStorm::TopicPrx> topic;
    shared_ptr<Ice::ObjectAdapter> adapter;
    ~Cleanup() {
        for (auto& c : comms) c->destroy();
        if (topic) {
            try {
                topic->destroy();
            } catch (const std::exception&) {
            }
        }
        if (adapter) adapter->destroy();
    }
};

static Result run(const shared_ptr<Ice::Communicator>& subComm, const Ice::PropertiesPtr& props,
                  const string& topicManager, const Workload& w, uint64_t perPublisher,
                  chrono::milliseconds drain) {
    static int runs = 0;
    Cleanup cleanup;
    auto tm = Ice::uncheckedCast<IceStorm::TopicManagerPrx>(subComm->stringToProxy(topicManager));
    string name = "fanin-" + w.name() + "-" + to_string(getpid()) + "-" + to_string(runs++);
    auto topic = tm->create(name);
    if (!topic) throw runtime_error("create returned a null proxy");
    cleanup.topic = topic;

    auto received = make_shared<Received>();
    auto adapter = subComm->createObjectAdapterWithEndpoints("FanIn.Subscriber" + to_string(runs),
                                                             "tcp -h 127.0.0.1 -p 0");
    cleanup.adapter = adapter;
    auto sub = adapter->add(make_shared<Subscriber>(received), Ice::stringToIdentity("subscriber"));
    adapter->activate();
    topic->subscribeAndGetPublisher(IceStorm::QoS{}, sub->ice_oneway());

    auto publisher = topic->getPublisher();
    if (!publisher) throw runtime_error("getPublisher returned a null proxy");
    const string publisherStr = subComm->proxyToString(publisher);
    vector<shared_ptr<Bench::MessagesPrx>> prxs;
    for (int i = 0; i < PUBLISHERS; ++i) {
        auto c = Ice::initialize(initData(props));
        cleanup.comms.push_back(c);
        auto p = Ice::uncheckedCast<Bench::MessagesPrx>(c->stringToProxy(publisherStr));
        // Connect now, not in the timed phase.
        p->ice_ping();
        prxs.push_back(p->ice_oneway());
    }
    const Payload payload(w);

    for (auto& p : prxs)
        for (int i = 0; i < WARM_UP; ++i) payload.publish(p);
    const uint64_t warm = PUBLISHERS * WARM_UP;
    uint64_t got = waitFor(*received, warm, drain);
    if (got < warm)
        throw runtime_error("warm-up: " + to_string(got) + " of " + to_string(warm) + " messages arrived");
    received->messages.store(0);
    const int64_t start = received->now();
    received->last.store(start);

    mutex errorMutex;
    string error;
    vector<thread> threads;
    for (auto& p : prxs) {
        threads.emplace_back([&, p] {
            try {
                for (uint64_t i = 0; i < perPublisher; ++i) payload.publish(p);
            } catch (const std::exception& e) {
                lock_guard<mutex> lock(errorMutex);
                if (error.empty()) error = string("publisher: ") + e.what();
            }
        });
    }
    for (auto& t : threads) t.join();
    if (!error.empty()) throw runtime_error(error);

    Result r;
    r.sent = PUBLISHERS * perPublisher;
    r.received = waitFor(*received, r.sent, drain);
    r.bytes = r.received * w.size;
    r.seconds = double(received->last.load() - start) / 1e9;
    return r;
}

int main(int argc, char* argv[]) {
    try {
        auto props = Ice::createProperties(argc, argv);
        if (props->getProperty("Ice.MessageSizeMax").empty()) props->setProperty("Ice.MessageSizeMax", "102400");
        auto args = props->parseCommandLineOptions("", Ice::argsToStringSeq(argc, argv));
        if (args.size() < 3) {
            cerr << "usage: fanin_client TOPIC_MANAGER IMPL [WORKLOAD...]" << endl;
            return 2;
        }
        const string topicManager = args[1], label = args[2];
        vector<string> names(args.begin() + 3, args.end());
        if (names.empty()) names = allWorkloads();
        vector<Workload> workloads;
        for (const auto& n : names) {
            Workload w;
            if (!parseWorkload(n, w)) {
                cerr << "fanin_client: unknown workload `" << n << "`" << endl;
                return 2;
            }
            workloads.push_back(w);
        }
        const auto drain = chrono::milliseconds(static_cast<long long>(envNumber("FANIN_DRAIN_MS", 3000)));
        Ice::CommunicatorHolder subComm(initData(props));
        for (const auto& w : workloads) {
            Result r = run(subComm.communicator(), props, topicManager, w, eventsPerPublisher(w.size), drain);
            double mb = r.seconds > 0 ? double(r.bytes) / 1e6 / r.seconds : 0.0;
            double us = r.received ? r.seconds * 1e6 / double(r.received) : 0.0;
            printf("{\"impl\":\"%s\",\"workload\":\"%s\",\"calls\":%" PRIu64 ",\"seconds\":%.6f,\"us_per_call\":%.3f,"
                   "\"mbit_s\":%.3f,\"mb_s\":%.3f,\"sent\":%" PRIu64 ",\"received\":%" PRIu64 ",\"lost\":%" PRIu64 "}\n",
                   label.c_str(), w.name().c_str(), r.received, r.seconds, us, mb * 8.0, mb, r.sent, r.received,
                   r.sent - r.received);
            fflush(stdout);
        }
    } catch (const std::exception& e) {
        cerr << "fanin_client: " << e.what() << endl;
        return 1;
    }
    return 0;
}
