// Ice 3.7 C++11 client of the floe interop suite: the same checks, names and
// output as py_client.py.
//
//     cpp_client "<endpoint>" [--only=name,name] [--Ice.Prop=value ...]
//
// Prints "PASS <name>" or "FAIL <name>: <detail>" per check, then
// "SUMMARY <passed> passed, <failed> failed"; exit status 0 only if all passed.
#include <Ice/Ice.h>
#include <Interop.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

using namespace std;

namespace
{

struct CheckFailed : runtime_error
{
    explicit CheckFailed(const string& detail) : runtime_error(detail) {}
};

void expect(bool cond, const string& detail)
{
    if(!cond)
    {
        throw CheckFailed(detail);
    }
}

template<class T> string show(const T&) { return "<value>"; }
string show(const string& v) { return "\"" + v + "\""; }
string show(bool v) { return v ? "true" : "false"; }
string show(int v) { return to_string(v); }
string show(long long v) { return to_string(v); }
string show(short v) { return to_string(v); }
string show(Ice::Byte v) { return to_string(static_cast<int>(v)); }
string show(double v)
{
    ostringstream os;
    os.precision(17);
    os << v;
    return os.str();
}
string show(float v) { return show(static_cast<double>(v)); }
string show(Interop::Color v) { return "Color(" + to_string(static_cast<int>(v)) + ")"; }
string show(Interop::Sparse v) { return "Sparse(" + to_string(static_cast<int>(v)) + ")"; }

template<class T> void eq(const T& got, const T& want, const string& what)
{
    if(!(got == want))
    {
        throw CheckFailed(what + ": got " + show(got) + ", want " + show(want));
    }
}

// Runs fn and requires it to throw E; returns the caught exception.
template<class E> E raises(const function<void()>& fn, const string& name)
{
    try
    {
        fn();
    }
    catch(const E& e)
    {
        return e;
    }
    catch(const Ice::Exception& e)
    {
        throw CheckFailed("expected " + name + ", got " + e.ice_id());
    }
    catch(const std::exception& e)
    {
        throw CheckFailed("expected " + name + ", got " + e.what());
    }
    throw CheckFailed("expected " + name + ", got no exception");
}

void waitTotal(const shared_ptr<Interop::TestPrx>& test, int want)
{
    auto deadline = chrono::steady_clock::now() + chrono::seconds(5);
    int total = test->getOnewayTotal();
    while(total != want && chrono::steady_clock::now() < deadline)
    {
        this_thread::sleep_for(chrono::milliseconds(20));
        total = test->getOnewayTotal();
    }
    eq(total, want, "oneway total");
}

class CallbackI : public Interop::Callback
{
public:
    int add(int a, int b, const Ice::Current&) override
    {
        ++calls;
        return a + b;
    }
    atomic<int> calls{0};
};

Interop::Mixed mixed(const string& name, double weight, bool flag, Interop::IntSeq values)
{
    return Interop::Mixed{name, weight, flag, move(values)};
}

using Check = pair<string, function<void()>>;

vector<Check> checks(const shared_ptr<Ice::Communicator>& comm, const string& endpoint)
{
    auto test = Ice::uncheckedCast<Interop::TestPrx>(comm->stringToProxy("test:" + endpoint));
    vector<Check> out;
    auto check = [&out](const string& name, function<void()> fn) { out.emplace_back(name, move(fn)); };

    check("ping", [=] { test->ice_ping(); });

    check("is_a", [=] {
        expect(test->ice_isA("::Interop::Test"), "ice_isA(::Interop::Test) is false");
        expect(!test->ice_isA("::Interop::Callback"), "ice_isA(::Interop::Callback) is true");
    });

    check("ids", [=] {
        auto ids = test->ice_ids();
        expect(ids == vector<string>{"::Ice::Object", "::Interop::Test"}, "ice_ids");
        eq(test->ice_id(), string("::Interop::Test"), "ice_id");
    });

    check("prims", [=] {
        bool ob;
        Ice::Byte oy;
        short os;
        int oi;
        long long ol;
        float of;
        double od;
        string s = "h\xc3\xa9llo \xe2\x82\xac";
        auto r = test->opPrims(true, 200, -2, 0x01020304, -1234567890123LL, 1.5f, -2.25, s, ob, oy, os, oi, ol, of, od);
        eq(r, s, "return");
        eq(ob, true, "ob");
        eq(oy, Ice::Byte(200), "oy");
        eq(os, short(-2), "os");
        eq(oi, 0x01020304, "oi");
        eq(ol, -1234567890123LL, "ol");
        eq(of, 1.5f, "of");
        eq(od, -2.25, "od");
    });

    check("prims_extremes", [=] {
        bool ob;
        Ice::Byte oy;
        short os;
        int oi;
        long long ol;
        float of;
        double od;
        string big = string(300, 'x') + "\xf0\x9f\x98\x80";
        auto r = test->opPrims(false, 0, numeric_limits<short>::min(), numeric_limits<int>::min(),
                               numeric_limits<long long>::min(), -numeric_limits<float>::max(), 1e308, big, ob, oy,
                               os, oi, ol, of, od);
        eq(r, big, "min return");
        eq(ob, false, "min ob");
        eq(oy, Ice::Byte(0), "min oy");
        eq(os, numeric_limits<short>::min(), "min os");
        eq(oi, numeric_limits<int>::min(), "min oi");
        eq(ol, numeric_limits<long long>::min(), "min ol");
        eq(of, -numeric_limits<float>::max(), "min of");
        eq(od, 1e308, "min od");
        r = test->opPrims(true, 255, numeric_limits<short>::max(), numeric_limits<int>::max(),
                          numeric_limits<long long>::max(), numeric_limits<float>::max(), -1e-300, "", ob, oy, os,
                          oi, ol, of, od);
        eq(r, string(), "max return");
        eq(ob, true, "max ob");
        eq(oy, Ice::Byte(255), "max oy");
        eq(os, numeric_limits<short>::max(), "max os");
        eq(oi, numeric_limits<int>::max(), "max oi");
        eq(ol, numeric_limits<long long>::max(), "max ol");
        eq(of, numeric_limits<float>::max(), "max of");
        eq(od, -1e-300, "max od");
    });

    check("byte_seq", [=] {
        expect(test->opByteSeq({}).empty(), "empty");
        eq(test->opByteSeq({1, 2, 3}), Interop::ByteSeq({1, 2, 3}), "small");
        Interop::ByteSeq data(500000);
        for(size_t i = 0; i < data.size(); ++i)
        {
            data[i] = static_cast<Ice::Byte>((i * 31 + 7) % 256);
        }
        expect(test->opByteSeq(data) == data, "500000-byte echo differs");
    });

    check("seqs", [=] {
        Interop::Seqs v;
        v.boolSeq = {true, false, true};
        v.byteSeq = {0, 1, 255};
        v.shortSeq = {-1, 2, 32767};
        for(int i = -150; i < 150; ++i)
        {
            v.intSeq.push_back(i);
        }
        v.longSeq = {1LL << 40, -5};
        v.floatSeq = {0.5f, -1.25f};
        v.doubleSeq = {3.125, -1e300};
        v.stringSeq = {"a", "", "h\xc3\xa9"};
        v.stringSeqSeq = {{"x"}, {}, {"y", "z"}};
        auto r = test->opSeqs(v);
        expect(r.boolSeq == v.boolSeq, "boolSeq");
        expect(r.byteSeq == v.byteSeq, "byteSeq");
        expect(r.shortSeq == v.shortSeq, "shortSeq");
        expect(r.intSeq == v.intSeq, "intSeq");
        expect(r.longSeq == v.longSeq, "longSeq");
        expect(r.floatSeq == v.floatSeq, "floatSeq");
        expect(r.doubleSeq == v.doubleSeq, "doubleSeq");
        expect(r.stringSeq == v.stringSeq, "stringSeq");
        expect(r.stringSeqSeq == v.stringSeqSeq, "stringSeqSeq");
    });

    check("dicts", [=] {
        Interop::StringIntDict a{{"one", 1}, {"two", 2}, {"neg", -3}};
        Interop::IntStringDict b{{1, "a"}, {-7, "b"}};
        Interop::StringMixedDict c{{"m", mixed("n", 0.5, true, {1, 2})}, {"e", mixed("", 0.0, false, {})}};
        Interop::IntStringDict ob;
        Interop::StringMixedDict oc;
        auto r = test->opDicts(a, b, c, ob, oc);
        expect(r == a, "return");
        expect(ob == b, "ob");
        expect(oc == c, "oc");
    });

    check("enums", [=] {
        using Interop::Color;
        Interop::Sparse os;
        Interop::ColorSeq ocs;
        Interop::ColorSeq cs{Color::Red, Color::Green, Color::Blue};
        auto r = test->opEnums(Color::Blue, Interop::Sparse::C, cs, os, ocs);
        eq(r, Color::Blue, "return");
        eq(os, Interop::Sparse::C, "os");
        expect(ocs == cs, "ocs");
        r = test->opEnums(Color::Red, Interop::Sparse::A, {}, os, ocs);
        eq(r, Color::Red, "second return");
        eq(os, Interop::Sparse::A, "second os");
        expect(ocs.empty(), "second ocs");
    });

    check("structs", [=] {
        Interop::Point p{1, -2};
        auto m = mixed("mix", 2.5, true, {1, 2, 3});
        Interop::Nested n{Interop::Point{3, 4}, mixed("inner", -0.5, false, {}), {{"k", 1}}, Interop::Color::Green,
                          {Interop::Point{5, 6}, Interop::Point{7, 8}}};
        Interop::PointSeq ps{{1, 2}, {3, 4}, {-5, 6}};
        Interop::MixedSeq ms{mixed("a", 1.0, false, {9}), mixed("", 0.0, true, {})};
        Interop::Point op;
        Interop::Mixed om;
        Interop::PointSeq ops;
        Interop::MixedSeq oms;
        auto rn = test->opStructs(p, m, n, ps, ms, op, om, ops, oms);
        expect(rn == n, "return");
        expect(op == p, "op");
        expect(om == m, "om");
        expect(ops == ps, "ops");
        expect(oms == ms, "oms");
    });

    check("optionals_set", [=] {
        auto m = mixed("o", 1.0, true, {4});
        Ice::optional<string> os;
        Ice::optional<Interop::Point> op;
        Ice::optional<Interop::IntSeq> oiseq;
        Ice::optional<Interop::Mixed> om;
        Ice::optional<Interop::Color> oc;
        Ice::optional<bool> obb;
        auto r = test->opOptional(1, 5, string("s"), Interop::Point{1, 2}, Interop::IntSeq{1, 2, 3}, m,
                                  Interop::Color::Blue, true, os, op, oiseq, om, oc, obb);
        expect(r && *r == 5, "return");
        expect(os && *os == "s", "os");
        expect(op && *op == Interop::Point({1, 2}), "op");
        expect(oiseq && *oiseq == Interop::IntSeq({1, 2, 3}), "oiseq");
        expect(om && *om == m, "om");
        expect(oc && *oc == Interop::Color::Blue, "oc");
        expect(obb && *obb == true, "obb");
    });

    check("optionals_unset", [=] {
        Ice::optional<string> os;
        Ice::optional<Interop::Point> op;
        Ice::optional<Interop::IntSeq> oiseq;
        Ice::optional<Interop::Mixed> om;
        Ice::optional<Interop::Color> oc;
        Ice::optional<bool> obb;
        auto r = test->opOptional(0, Ice::nullopt, Ice::nullopt, Ice::nullopt, Ice::nullopt, Ice::nullopt,
                                  Ice::nullopt, Ice::nullopt, os, op, oiseq, om, oc, obb);
        expect(!r && !os && !op && !oiseq && !om && !oc && !obb, "expected all unset");
        r = test->opOptional(2, 9, Ice::nullopt, Ice::nullopt, Ice::nullopt, Ice::nullopt, Ice::nullopt, false, os,
                             op, oiseq, om, oc, obb);
        expect(r && *r == 9, "return");
        expect(!os && !op && !oiseq && !om && !oc, "expected unset outs");
        expect(obb && *obb == false, "obb");
    });

    check("class_base", [=] {
        auto r = test->opBase(make_shared<Interop::Base>(5));
        expect(r != nullptr, "null");
        eq(r->ice_id(), string("::Interop::Base"), "type");
        eq(r->a, 5, "a");
    });

    check("class_derived", [=] {
        auto r = dynamic_pointer_cast<Interop::Derived>(test->opBase(make_shared<Interop::Derived>(6, "d")));
        expect(r != nullptr, "not a Derived");
        eq(r->a, 6, "a");
        eq(r->s, string("d"), "s");
    });

    check("class_null", [=] { expect(test->opBase(nullptr) == nullptr, "null class did not come back null"); });

    check("class_graph_cycle", [=] {
        auto n1 = make_shared<Interop::Node>(1, nullptr);
        auto n2 = make_shared<Interop::Node>(2, n1);
        n1->next = n2;
        auto r = test->opGraph(n1);
        n1->next = nullptr;
        expect(r && r->next, "missing nodes");
        eq(r->v, 1, "v1");
        eq(r->next->v, 2, "v2");
        expect(r->next->next == r, "cycle not preserved");
        r->next->next = nullptr;
    });

    check("class_shared", [=] {
        auto b = make_shared<Interop::Base>(9);
        auto r = test->opPair(make_shared<Interop::Pair>(b, b));
        expect(r && r->x, "missing members");
        expect(r->x == r->y, "shared instance came back as two instances");
        eq(r->x->a, 9, "x.a");
        r = test->opPair(make_shared<Interop::Pair>(make_shared<Interop::Base>(1), make_shared<Interop::Derived>(2, "z")));
        auto y = dynamic_pointer_cast<Interop::Derived>(r->y);
        expect(y != nullptr, "y type");
        eq(r->x->a, 1, "x.a");
        eq(y->a, 2, "y.a");
        eq(y->s, string("z"), "y.s");
    });

    check("class_optional_members", [=] {
        auto r = test->opWithOpt(make_shared<Interop::WithOpt>(1, 2, string("z")));
        expect(r && r->a == 1 && r->b && *r->b == 2 && r->s && *r->s == "z", "set members");
        r = test->opWithOpt(make_shared<Interop::WithOpt>(3, Ice::nullopt, Ice::nullopt));
        expect(r && r->a == 3 && !r->b && !r->s, "unset members");
    });

    check("class_unknown_sliced", [=] {
        auto r = test->getUnknownClass();
        expect(r != nullptr, "null");
        eq(r->ice_id(), string("::Interop::Derived"), "type");
        auto d = dynamic_pointer_cast<Interop::Derived>(r);
        eq(d->a, 7, "a");
        eq(d->s, string("known"), "s");
    });

    check("exc_base", [=] {
        auto e = raises<Interop::BaseErr>([=] { test->throwErr(1); }, "BaseErr");
        eq(e.ice_id(), string("::Interop::BaseErr"), "type");
        eq(e.reason, string("base"), "reason");
    });

    check("exc_derived", [=] {
        auto e = raises<Interop::DerivedErr>([=] { test->throwErr(2); }, "DerivedErr");
        eq(e.reason, string("derived"), "reason");
        eq(e.code, 42, "code");
    });

    check("exc_none", [=] { test->throwErr(0); });

    check("exc_sliced_known", [=] {
        auto e = raises<Interop::DerivedErr>([=] { test->throwSliced(1); }, "DerivedErr");
        eq(e.reason, string("sliced"), "reason");
        eq(e.code, 43, "code");
    });

    check("exc_sliced_unknown", [=] {
        auto e = raises<Interop::DerivedErr>([=] { test->throwSliced(2); }, "DerivedErr");
        eq(e.ice_id(), string("::Interop::DerivedErr"), "type");
        eq(e.reason, string("secret"), "reason");
        eq(e.code, 44, "code");
    });

    check("exc_undeclared", [=] {
        auto e = raises<Ice::UnknownUserException>([=] { test->throwUndeclared(); }, "UnknownUserException");
        expect(e.unknown.find("Interop::BaseErr") != string::npos, "unknown = " + e.unknown);
    });

    check("exc_non_ice", [=] { raises<Ice::UnknownException>([=] { test->throwNonIce(); }, "UnknownException"); });

    check("object_not_exist", [=] {
        auto missing = Ice::uncheckedCast<Interop::TestPrx>(comm->stringToProxy("missing:" + endpoint));
        auto e = raises<Ice::ObjectNotExistException>([=] { missing->ice_ping(); }, "ObjectNotExistException");
        eq(e.id.name, string("missing"), "id");
        raises<Ice::ObjectNotExistException>([=] { missing->getFacet(); }, "ObjectNotExistException");
    });

    check("facet_not_exist", [=] {
        raises<Ice::FacetNotExistException>([=] { test->ice_facet("nope")->ice_ping(); }, "FacetNotExistException");
    });

    check("operation_not_exist", [=] {
        auto u = Ice::uncheckedCast<Interop::UnimplementedPrx>(test);
        auto e = raises<Ice::OperationNotExistException>([=] { u->missing(); }, "OperationNotExistException");
        eq(e.operation, string("missing"), "operation");
    });

    check("proxy_param", [=] {
        auto p = comm->stringToProxy("cat/id -f fac -o:tcp -h 127.0.0.1 -p 12345 -t 500");
        auto r = test->opProxy(p);
        expect(r != nullptr, "null");
        eq(comm->proxyToString(r), comm->proxyToString(p), "proxy");
        expect(test->opProxy(nullptr) == nullptr, "null proxy did not come back null");
        auto back = Ice::uncheckedCast<Interop::TestPrx>(test->opProxy(test->ice_facet("facetA")));
        eq(back->getFacet(), string("facetA"), "call through returned proxy");
    });

    check("facets", [=] {
        eq(test->getFacet(), string(), "default facet");
        auto fa = Ice::uncheckedCast<Interop::TestPrx>(test->ice_facet("facetA"));
        eq(fa->getFacet(), string("facetA"), "facetA");
    });

    check("context", [=] {
        expect(test->getContext().empty(), "empty");
        Ice::Context ctx{{"a", "b"}, {"k", "v"}};
        expect(test->getContext(ctx) == ctx, "per call");
        Ice::Context pctx{{"p", "q"}};
        expect(test->ice_context(pctx)->getContext() == pctx, "proxy context");
    });

    check("oneway", [=] {
        test->reset();
        auto ow = test->ice_oneway();
        for(int n = 1; n <= 5; ++n)
        {
            ow->onewayAdd(n);
        }
        waitTotal(test, 15);
    });

    check("batch_oneway", [=] {
        test->reset();
        auto b = test->ice_batchOneway();
        b->onewayAdd(10);
        b->onewayAdd(20);
        this_thread::sleep_for(chrono::milliseconds(200));
        eq(test->getOnewayTotal(), 0, "total before flush");
        b->ice_flushBatchRequests();
        waitTotal(test, 30);
    });

    check("compress", [=] {
        auto z = test->ice_compress(true);
        Interop::ByteSeq data(100000);
        for(size_t i = 0; i < data.size(); ++i)
        {
            data[i] = static_cast<Ice::Byte>(i % 7);
        }
        expect(z->opByteSeq(data) == data, "compressed echo differs");
        expect(z->opByteSeq({'a', 'b'}) == Interop::ByteSeq({'a', 'b'}), "small compressed echo");
    });

    check("idempotent_retry", [=] {
        test->reset();
        eq(test->idemDropOnce(), 2, "idemDropOnce");
    });

    check("normal_no_retry", [=] {
        test->reset();
        raises<Ice::ConnectionLostException>([=] { test->dropOnce(); }, "ConnectionLostException");
        eq(test->dropOnce(), 2, "second dropOnce");
    });

    check("concurrency", [=] {
        test->ice_ping(); // connect first: time the dispatch, not a handshake
        auto start = chrono::steady_clock::now();
        vector<future<int>> futures;
        for(int i = 0; i < 4; ++i)
        {
            futures.push_back(test->sleepMsAsync(500));
        }
        for(auto& f : futures)
        {
            eq(f.get(), 500, "result");
        }
        auto elapsed = chrono::duration<double>(chrono::steady_clock::now() - start).count();
        expect(elapsed < 1.5, "4 x sleepMs(500) took " + show(elapsed) + "s: not dispatched concurrently");
    });

    check("bidir", [=] {
        auto adapter = comm->createObjectAdapter("");
        auto cb = make_shared<CallbackI>();
        adapter->add(cb, Ice::Identity{"cb", ""});
        adapter->activate();
        test->ice_getConnection()->setAdapter(adapter);
        eq(test->callCallback("cb", 3, 4), 7, "callCallback");
        eq(cb->calls.load(), 1, "callback calls");
    });

    return out;
}

}

int main(int argc, char* argv[])
{
    if(argc < 2)
    {
        cerr << "usage: cpp_client <endpoint> [--only=a,b] [--Ice.Prop=value ...]" << endl;
        return 2;
    }
    string endpoint = argv[1];
    set<string> only;
    Ice::StringSeq rest;
    for(int i = 2; i < argc; ++i)
    {
        string a = argv[i];
        if(a.compare(0, 7, "--only=") == 0)
        {
            istringstream names(a.substr(7));
            string name;
            while(getline(names, name, ','))
            {
                only.insert(name);
            }
        }
        else
        {
            rest.push_back(a);
        }
    }
    Ice::InitializationData init;
    init.properties = Ice::createProperties(rest);
    init.properties->setProperty("Ice.AcceptClassCycles", "1");
    init.properties->setProperty("Ice.Warn.Connections", "0");
    int passed = 0;
    int failed = 0;
    {
        Ice::CommunicatorHolder ich(init);
        for(auto& c : checks(ich.communicator(), endpoint))
        {
            if(!only.empty() && only.count(c.first) == 0)
            {
                continue;
            }
            string detail;
            try
            {
                c.second();
                cout << "PASS " << c.first << endl;
                ++passed;
                continue;
            }
            catch(const CheckFailed& e)
            {
                detail = e.what();
            }
            catch(const Ice::Exception& e)
            {
                ostringstream os;
                os << e.ice_id() << ": " << e;
                detail = os.str();
            }
            catch(const std::exception& e)
            {
                detail = e.what();
            }
            for(auto& ch : detail)
            {
                if(ch == '\n')
                {
                    ch = ' ';
                }
            }
            cout << "FAIL " << c.first << ": " << detail << endl;
            ++failed;
        }
    }
    cout << "SUMMARY " << passed << " passed, " << failed << " failed" << endl;
    return failed == 0 ? 0 : 1;
}
