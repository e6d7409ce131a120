// Ice 3.7 C++11 server of the floe interop suite (same behaviour as py_server.py).
//
//     cpp_server <port> [--Ice.Prop=value ...]
//
// Listens on tcp -h 127.0.0.1 -p <port> (0 picks a free port), or on
// --Interop.Endpoints=... when given (e.g. ssl, with the IceSSL plugin and
// its properties among the arguments), serves
// Interop::Test as "test" (default facet and facet "facetA") and prints
// "READY <port>" once listening. Exits on Test::shutdown() or when killed.
#include <Ice/Ice.h>
#include <Interop.h>
#include <ServerOnly.h>

#include <chrono>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <thread>

using namespace std;

namespace
{

// Counters shared by every facet of the servant.
struct State
{
    mutex lock;
    int onewayTotal = 0;
    int idemCalls = 0;
    int dropCalls = 0;
};

class TestI : public Interop::Test
{
public:
    explicit TestI(shared_ptr<State> state) : _state(move(state)) {}

    string opPrims(bool b, Ice::Byte y, short s, int i, long long l, float f, double d, string str,
                   bool& ob, Ice::Byte& oy, short& os, int& oi, long long& ol, float& of, double& od,
                   const Ice::Current&) override
    {
        ob = b;
        oy = y;
        os = s;
        oi = i;
        ol = l;
        of = f;
        od = d;
        return str;
    }

    Interop::ByteSeq opByteSeq(Interop::ByteSeq v, const Ice::Current&) override { return v; }

    Interop::Seqs opSeqs(Interop::Seqs v, const Ice::Current&) override { return v; }

    Interop::StringIntDict opDicts(Interop::StringIntDict a, Interop::IntStringDict b, Interop::StringMixedDict c,
                                   Interop::IntStringDict& ob, Interop::StringMixedDict& oc,
                                   const Ice::Current&) override
    {
        ob = move(b);
        oc = move(c);
        return a;
    }

    Interop::Color opEnums(Interop::Color c, Interop::Sparse s, Interop::ColorSeq cs, Interop::Sparse& os,
                           Interop::ColorSeq& ocs, const Ice::Current&) override
    {
        os = s;
        ocs = move(cs);
        return c;
    }

    Interop::Nested opStructs(Interop::Point p, Interop::Mixed m, Interop::Nested n, Interop::PointSeq ps,
                              Interop::MixedSeq ms, Interop::Point& op, Interop::Mixed& om, Interop::PointSeq& ops,
                              Interop::MixedSeq& oms, const Ice::Current&) override
    {
        op = p;
        om = move(m);
        ops = move(ps);
        oms = move(ms);
        return n;
    }

    Ice::optional<int> opOptional(int, Ice::optional<int> i, Ice::optional<string> s, Ice::optional<Interop::Point> p,
                                  Ice::optional<Interop::IntSeq> iseq, Ice::optional<Interop::Mixed> m,
                                  Ice::optional<Interop::Color> c, Ice::optional<bool> bb,
                                  Ice::optional<string>& os, Ice::optional<Interop::Point>& op,
                                  Ice::optional<Interop::IntSeq>& oiseq, Ice::optional<Interop::Mixed>& om,
                                  Ice::optional<Interop::Color>& oc, Ice::optional<bool>& obb,
                                  const Ice::Current&) override
    {
        os = s;
        op = p;
        oiseq = iseq;
        om = m;
        oc = c;
        obb = bb;
        return i;
    }

    shared_ptr<Interop::Base> opBase(shared_ptr<Interop::Base> b, const Ice::Current&) override { return b; }
    shared_ptr<Interop::Node> opGraph(shared_ptr<Interop::Node> n, const Ice::Current&) override { return n; }
    shared_ptr<Interop::Pair> opPair(shared_ptr<Interop::Pair> p, const Ice::Current&) override { return p; }
    shared_ptr<Interop::WithOpt> opWithOpt(shared_ptr<Interop::WithOpt> w, const Ice::Current&) override
    {
        return w;
    }

    shared_ptr<Interop::Base> getUnknownClass(const Ice::Current&) override
    {
        return make_shared<Interop::SecretDerived>(7, "known", "hidden");
    }

    void throwErr(int which, const Ice::Current&) override
    {
        if(which == 1)
        {
            throw Interop::BaseErr("base");
        }
        if(which == 2)
        {
            throw Interop::DerivedErr("derived", 42);
        }
    }

    void throwSliced(int which, const Ice::Current&) override
    {
        if(which == 1)
        {
            throw Interop::DerivedErr("sliced", 43);
        }
        if(which == 2)
        {
            throw Interop::SecretErr("secret", 44, "hidden");
        }
    }

    void throwUndeclared(const Ice::Current&) override { throw Interop::BaseErr("undeclared"); }

    void throwNonIce(const Ice::Current&) override { throw runtime_error("c++ error"); }

    shared_ptr<Ice::ObjectPrx> opProxy(shared_ptr<Ice::ObjectPrx> p, const Ice::Current&) override { return p; }

    void onewayAdd(int n, const Ice::Current&) override
    {
        lock_guard<mutex> g(_state->lock);
        _state->onewayTotal += n;
    }

    int getOnewayTotal(const Ice::Current&) override
    {
        lock_guard<mutex> g(_state->lock);
        return _state->onewayTotal;
    }

    int idemDropOnce(const Ice::Current& current) override { return countAndDrop(_state->idemCalls, current); }

    int dropOnce(const Ice::Current& current) override { return countAndDrop(_state->dropCalls, current); }

    int sleepMs(int ms, const Ice::Current&) override
    {
        this_thread::sleep_for(chrono::milliseconds(ms));
        return ms;
    }

    int callCallback(string name, int a, int b, const Ice::Current& current) override
    {
        auto cb = Ice::uncheckedCast<Interop::CallbackPrx>(current.con->createProxy(Ice::Identity{name, ""}));
        return cb->add(a, b);
    }

    Interop::StringStringDict getContext(const Ice::Current& current) override { return current.ctx; }

    string getFacet(const Ice::Current& current) override { return current.facet; }

    void reset(const Ice::Current&) override
    {
        lock_guard<mutex> g(_state->lock);
        _state->onewayTotal = 0;
        _state->idemCalls = 0;
        _state->dropCalls = 0;
    }

    void shutdown(const Ice::Current& current) override { current.adapter->getCommunicator()->shutdown(); }

private:
    // Counts a call; the first one closes the connection before the reply is sent.
    int countAndDrop(int& counter, const Ice::Current& current)
    {
        int calls;
        {
            lock_guard<mutex> g(_state->lock);
            calls = ++counter;
        }
        if(calls == 1)
        {
            current.con->close(Ice::ConnectionClose::Forcefully);
        }
        return calls;
    }

    shared_ptr<State> _state;
};

}

int main(int argc, char* argv[])
{
    if(argc < 2)
    {
        cerr << "usage: cpp_server <port> [--Ice.Prop=value ...]" << endl;
        return 2;
    }
    string port = argv[1];
    Ice::StringSeq args(argv + 2, argv + argc);
    Ice::InitializationData init;
    init.properties = Ice::createProperties(args);
    init.properties->parseCommandLineOptions("Interop", args);
    if(init.properties->getProperty("Interop.Endpoints").empty())
    {
        init.properties->setProperty("Interop.Endpoints", "tcp -h 127.0.0.1 -p " + port);
    }
    init.properties->setProperty("Ice.ThreadPool.Server.Size", "8");
    init.properties->setProperty("Ice.ThreadPool.Server.SizeMax", "8");
    init.properties->setProperty("Ice.AcceptClassCycles", "1");
    init.properties->setProperty("Ice.Warn.Connections", "0");
    init.properties->setProperty("Ice.Warn.Dispatch", "0");
    try
    {
        Ice::CommunicatorHolder ich(init);
        auto adapter = ich->createObjectAdapter("Interop");
        auto state = make_shared<State>();
        auto ident = Ice::stringToIdentity("test");
        adapter->add(make_shared<TestI>(state), ident);
        adapter->addFacet(make_shared<TestI>(state), ident, "facetA");
        adapter->activate();
        // An ssl endpoint's info wraps the TCP endpoint's.
        auto base = adapter->getEndpoints()[0]->getInfo();
        while(!dynamic_pointer_cast<Ice::IPEndpointInfo>(base) && base->underlying)
        {
            base = base->underlying;
        }
        auto info = dynamic_pointer_cast<Ice::IPEndpointInfo>(base);
        cout << "READY " << (info ? info->port : -1) << endl;
        ich->waitForShutdown();
    }
    catch(const std::exception& e)
    {
        cerr << "cpp_server: " << e.what() << endl;
        return 1;
    }
    return 0;
}
