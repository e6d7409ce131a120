// Ice 3.7 C++11 client of the floe conformance suite: the same checks, names
// and output as client.py.
//
//     client <port> <cycles port> <facets port> <server kind: cpp|python|python38|floe>
//
// Knows Conformance.ice and the client-only exceptions of ClientOnly.ice
// (raised by its Relay servant, on an adapter of its own). Prints "PASS <config>/<check>" or
// "FAIL <config>/<check>: <detail>" per check, then
// "SUMMARY <passed> passed, <failed> failed".
#include <Ice/Ice.h>
#include <Conformance.h>
#include <ClientOnly.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <thread>

using namespace std;
using namespace Conf;

namespace
{

struct Failed : runtime_error
{
    explicit Failed(const string& detail) : runtime_error(detail) {}
};

void expect(bool cond, const string& detail)
{
    if(!cond)
    {
        throw Failed(detail);
    }
}

void eqs(const string& got, const string& want, const string& what)
{
    if(got != want)
    {
        throw Failed(what + ": got \"" + got + "\", want \"" + want + "\"");
    }
}

template<class T> void eqn(T got, T want, const string& what)
{
    if(!(got == want))
    {
        ostringstream os;
        os.precision(17);
        os << what << ": got " << +got << ", want " << +want;
        throw Failed(os.str());
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
        throw Failed("expected " + name + ", got " + e.ice_id());
    }
    catch(const std::exception& e)
    {
        throw Failed("expected " + name + ", got " + e.what());
    }
    throw Failed("expected " + name + ", got no exception");
}

struct Ctx
{
    shared_ptr<Ice::Communicator> communicator;
    int port;
    int facetsPort;
    bool enc10;
    bool cycles;
    string server;
    shared_ptr<OperationsPrx> ops;
    shared_ptr<OptionalsPrx> opt;
    shared_ptr<ObjectsPrx> obj;
    shared_ptr<ExceptionsPrx> exc;
    shared_ptr<SlicedExceptionsPrx> sexc;
    shared_ptr<SlicedObjectsPrx> sobj;
    shared_ptr<CompactObjectsPrx> cobj;
    shared_ptr<RelayingPrx> relaying;
    shared_ptr<RelayPrx> relay;
    shared_ptr<ValuesPrx> vf;

    template<class P> shared_ptr<P> prx(const string& name) const
    {
        auto base = communicator->stringToProxy(name + ":tcp -h 127.0.0.1 -p " + to_string(port) + " -t 10000");
        return Ice::uncheckedCast<P>(base->ice_encodingVersion(enc10 ? Ice::Encoding_1_0 : Ice::Encoding_1_1));
    }

    shared_ptr<FacetedPrx> facet(const string& name, const string& facet = "") const
    {
        auto base = communicator->stringToProxy(name + ":tcp -h 127.0.0.1 -p " + to_string(facetsPort) + " -t 10000");
        return Ice::uncheckedCast<FacetedPrx>(
            base->ice_encodingVersion(enc10 ? Ice::Encoding_1_0 : Ice::Encoding_1_1)->ice_facet(facet));
    }

    shared_ptr<LocatedPrx> located(const string& name) const { return prx<LocatedPrx>(name); }

    // `name` on the main adapter through another communicator.
    template<class P> shared_ptr<P> prxOn(const shared_ptr<Ice::Communicator>& other, const string& name) const
    {
        auto base = other->stringToProxy(name + ":tcp -h 127.0.0.1 -p " + to_string(port) + " -t 10000");
        return Ice::uncheckedCast<P>(base->ice_encodingVersion(enc10 ? Ice::Encoding_1_0 : Ice::Encoding_1_1));
    }

    // Ice for C++ (and floe, which follows it) refuses class graphs with
    // cycles unless Ice.AcceptClassCycles is set; in encoding 1.0 it only
    // sees an instance that refers to itself. Ice for Python (3.7 and 3.8)
    // accepts every cycle. Whether a peer of `kind` refuses one here:
    bool refuses(const string& kind, bool selfLoop = false) const
    {
        return kind != "python" && kind != "python38" && !cycles && (selfLoop || !enc10);
    }

    // Whether the server's exceptions come in the sliced format: 1.0
    // always writes slice sizes, and Ice 3.8 marshals every exception in
    // the sliced format.
    bool slicedExceptions() const { return enc10 || server == "python38"; }
};

template<class T> string nullState(const Ice::optional<T>& v) { return !v ? "unset" : (*v ? "set" : "null"); }

// Raises exceptions that only clients know, for a server to relay.
class RelayI : public Relay
{
public:
    void raisePreserved(const Ice::Current&) override
    {
        throw ClientPreservedError("pres", "extra", make_shared<Base>("rb"));
    }
    void raiseUnpreserved(const Ice::Current&) override { throw ClientDerivedError("plain", 3, "more"); }
};

class HookedI : public Hooked
{
public:
    using Hooked::Hooked;
    void ice_preMarshal() override { preMarshalled = true; }
    void ice_postUnmarshal() override { postUnmarshalled = true; }
};

void addHookedFactory(const shared_ptr<Ice::Communicator>& communicator)
{
    communicator->getValueFactoryManager()->add([](const string&) { return make_shared<HookedI>(); },
                                                Hooked::ice_staticId());
}

// An adapter of the client's own on 127.0.0.1 with the Relay servant.
shared_ptr<RelayPrx> relayProxy(const shared_ptr<Ice::Communicator>& communicator)
{
    auto adapter = communicator->createObjectAdapterWithEndpoints("Relay", "tcp -h 127.0.0.1 -p 0");
    auto prx = adapter->add(make_shared<RelayI>(), Ice::stringToIdentity("relay"));
    adapter->activate();
    return Ice::uncheckedCast<RelayPrx>(prx);
}

using Check = pair<string, function<void(const Ctx&)>>;
vector<Check> checks;

void check(const string& name, function<void(const Ctx&)> fn) { checks.emplace_back(name, move(fn)); }

Record record(const string& name = "r", double weight = 2.5, bool flag = true, IntSeq values = {1, 2, 3},
              Color color = Color::Blue)
{
    // Record has a member default, so it is no aggregate in C++11.
    Record r;
    r.name = name;
    r.weight = weight;
    r.flag = flag;
    r.values = move(values);
    r.color = color;
    return r;
}

shared_ptr<Derived> derived(const string& b = "d", int d = 4) { return make_shared<Derived>(b, d, Point{1, 2}); }

void sameDerived(const shared_ptr<Ice::Value>& got, const string& b, int d, const string& what)
{
    auto x = dynamic_pointer_cast<Derived>(got);
    expect(x && got->ice_id() == "::Conf::Derived", what + ": not a Derived");
    eqs(x->b, b, what + ".b");
    eqn(x->d, d, what + ".d");
    expect(x->p == (Point{1, 2}), what + ".p");
}

string ident(const shared_ptr<Ice::ObjectPrx>& p) { return p ? Ice::identityToString(p->ice_getIdentity()) : "null"; }

float f32(double v) { return static_cast<float>(v); }

template<class T> T reversed(T v)
{
    reverse(v.begin(), v.end());
    return v;
}

template<class T> void seqCheck(const string& name, T (OperationsPrx::*op)(const T&, T&, const Ice::Context&),
                                T value, bool empty = true)
{
    check("ops." + name, [=](const Ctx& c) {
        T p2;
        T r = ((*c.ops).*op)(value, p2, Ice::noExplicitContext);
        expect(r == reversed(value), name + ": returned");
        expect(p2 == value, name + ": out");
        if(empty)
        {
            r = ((*c.ops).*op)(T(), p2, Ice::noExplicitContext);
            expect(r.empty() && p2.empty(), name + "(empty)");
        }
    });
}

template<class T> void dictCheck(const string& name,
                                 T (OperationsPrx::*op)(const T&, const T&, T&, const Ice::Context&), T p1, T p2)
{
    check("ops." + name, [=](const Ctx& c) {
        T want = p1;
        for(const auto& kv : p2)
        {
            want[kv.first] = kv.second;
        }
        T p3;
        T r = ((*c.ops).*op)(p1, p2, p3, Ice::noExplicitContext);
        expect(r == want, name + ": returned");
        expect(p3 == p1, name + ": out");
        r = ((*c.ops).*op)(T(), T(), p3, Ice::noExplicitContext);
        expect(r.empty() && p3.empty(), name + "(empty)");
    });
}

template<class T> void optCheck(const string& name,
                                Ice::optional<T> (OptionalsPrx::*op)(const Ice::optional<T>&, Ice::optional<T>&,
                                                                     const Ice::Context&),
                                T value)
{
    check("opt." + name, [=](const Ctx& c) {
        Ice::optional<T> p3;
        auto r = ((*c.opt).*op)(value, p3, Ice::noExplicitContext);
        if(c.enc10)
        {
            expect(!r && !p3, name + " in 1.0: something came back");
        }
        else
        {
            expect(r && *r == value, name + ": returned");
            expect(p3 && *p3 == value, name + ": out");
        }
        r = ((*c.opt).*op)(Ice::nullopt, p3, Ice::noExplicitContext);
        expect(!r && !p3, name + "(unset): something came back");
    });
}

vector<shared_ptr<Node>> nodes(shared_ptr<Node> n)
{
    vector<shared_ptr<Node>> out;
    while(n && out.size() < 1000)
    {
        out.push_back(n);
        n = n->next;
    }
    return out;
}

void breakCycle(shared_ptr<Node> n)
{
    for(auto& x : nodes(n))
    {
        x->next = nullptr;
    }
}

void plainShape(const shared_ptr<Ice::Value>& s, const string& name, const string& what)
{
    auto shape = dynamic_pointer_cast<Shape>(s);
    expect(shape && s->ice_id() == "::Conf::Shape", what + ": not a plain Shape");
    eqs(shape->name, name, what + ".name");
}

void registerChecks()
{
    // ------------------------------------------------------------ operations
    check("ops.void", [](const Ctx& c) { c.ops->opVoid(); });

    check("ops.builtins", [](const Ctx& c) {
        c.ops->ice_ping();
        expect(c.ops->ice_isA("::Conf::Operations"), "ice_isA(::Conf::Operations)");
        expect(!c.ops->ice_isA("::Conf::Optionals"), "ice_isA(::Conf::Optionals)");
        auto ids = c.ops->ice_ids();
        sort(ids.begin(), ids.end());
        expect(ids == vector<string>{"::Conf::Operations", "::Ice::Object"}, "ice_ids");
        eqs(c.ops->ice_id(), "::Conf::Operations", "ice_id");
    });

    check("ops.checked_cast", [](const Ctx& c) {
        expect(Ice::checkedCast<OperationsPrx>(c.ops) != nullptr, "checkedCast to Operations");
        expect(Ice::checkedCast<OptionalsPrx>(c.ops) == nullptr, "checkedCast to Optionals");
    });

    check("ops.byte", [](const Ctx& c) {
        Ice::Byte p3;
        eqn(c.ops->opByte(0xff, 0x0f, p3), Ice::Byte(0xff), "opByte(255, 15)");
        eqn(p3, Ice::Byte(0x0f), "p3");
        eqn(c.ops->opByte(0, 0x80, p3), Ice::Byte(0), "opByte(0, 128)");
        eqn(p3, Ice::Byte(0x80), "p3");
    });

    check("ops.bool", [](const Ctx& c) {
        bool p3;
        expect(c.ops->opBool(true, false, p3) && !p3, "opBool(true, false)");
        expect(!c.ops->opBool(false, true, p3) && p3, "opBool(false, true)");
    });

    check("ops.short_int_long", [](const Ctx& c) {
        short p4;
        int p5;
        long long p6;
        auto r = c.ops->opShortIntLong(numeric_limits<short>::min(), numeric_limits<int>::max(),
                                       numeric_limits<long long>::min(), p4, p5, p6);
        eqn(r, numeric_limits<long long>::min(), "return");
        eqn(p4, numeric_limits<short>::min(), "p4");
        eqn(p5, numeric_limits<int>::max(), "p5");
        eqn(p6, numeric_limits<long long>::min(), "p6");
        r = c.ops->opShortIntLong(numeric_limits<short>::max(), numeric_limits<int>::min(),
                                  numeric_limits<long long>::max(), p4, p5, p6);
        eqn(r, numeric_limits<long long>::max(), "return");
        eqn(p4, numeric_limits<short>::max(), "p4");
        eqn(p5, numeric_limits<int>::min(), "p5");
        eqn(p6, numeric_limits<long long>::max(), "p6");
    });

    check("ops.float_double", [](const Ctx& c) {
        float p3;
        double p4;
        eqn(c.ops->opFloatDouble(3.5f, -1e300, p3, p4), -1e300, "return");
        eqn(p3, 3.5f, "p3");
        eqn(p4, -1e300, "p4");
        float fmax = numeric_limits<float>::max();
        eqn(c.ops->opFloatDouble(fmax, 5e-324, p3, p4), 5e-324, "return");
        eqn(p3, fmax, "p3");
        eqn(p4, 5e-324, "p4");
    });

    check("ops.float_special", [](const Ctx& c) {
        float p3;
        double p4;
        double r = c.ops->opFloatDouble(numeric_limits<float>::infinity(), nan(""), p3, p4);
        expect(std::isnan(r) && std::isnan(p4) && std::isinf(p3) && p3 > 0, "inf/nan");
        r = c.ops->opFloatDouble(-0.0f, -numeric_limits<double>::infinity(), p3, p4);
        expect(std::isinf(r) && r < 0 && p3 == 0.0f && std::signbit(p3), "-0/-inf");
    });

    check("ops.string", [](const Ctx& c) {
        string p3;
        string a = "h\xc3\xa9llo ", b = "w\xc3\xb6rld \xe2\x82\xac\xf0\x9f\x98\x80";
        eqs(c.ops->opString(a, b, p3), a + b, "unicode return");
        eqs(p3, b + a, "unicode out");
        eqs(c.ops->opString("", "", p3), "", "empty");
        eqs(p3, "", "empty out");
        string nul("a\0b", 3);
        eqs(c.ops->opString(nul, "c", p3), nul + "c", "embedded NUL");
        eqs(p3, "c" + nul, "embedded NUL out");
    });

    check("ops.string_long", [](const Ctx& c) {
        string s(100000, 'x'), p3;
        expect(c.ops->opString(s, "y", p3) == s + "y" && p3 == "y" + s, "100000 characters");
    });

    check("ops.enum", [](const Ctx& c) {
        Level p3;
        expect(c.ops->opEnum(Color::Blue, Level::High, p3) == Color::Blue && p3 == Level::High, "Blue, High");
        expect(c.ops->opEnum(Color::Red, Level::Low, p3) == Color::Red && p3 == Level::Low, "Red, Low");
    });

    check("ops.struct", [](const Ctx& c) {
        Record p3;
        auto r = c.ops->opStruct(Point{1, -2}, record(), p3);
        expect(r == (Point{1, -2}), "returned point");
        expect(p3 == record(), "out record");
    });

    check("ops.nested", [](const Ctx& c) {
        Nested n{Point{3, 4}, record("n", -0.5, false, {7}, Color::Red), StringIntSeqDict{{"a", {1, 2}}, {"b", {}}},
                 Level::High, PointSeq{Point{1, 1}, Point{2, 2}}};
        Nested p2;
        expect(c.ops->opNested(n, p2) == n, "returned");
        expect(p2 == n, "out");
    });

    check("ops.defaults", [](const Ctx& c) {
        auto d = c.ops->opDefaults();
        expect(d.b && d.y == 254 && d.s == -3 && d.i == 42 && d.l == 1234567890123LL && d.f == 0.5f &&
                   d.d == -1.25 && d.str == "h\xc3\xa9llo" && d.c == Color::Blue && d.lv == Level::Mid,
               "Defaults()");
        eqn(Answer, 42, "Answer");
    });

    check("ops.default_record", [](const Ctx& c) {
        expect(c.ops->opDefaultRecord() == record("", 0.0, false, {}, Color::Green), "Record()");
    });

    seqCheck<BoolSeq>("bool_seq", &OperationsPrx::opBoolSeq, {true, false, false});
    ByteSeq bytes;
    for(int k = 0; k < 4; ++k)
    {
        for(int i = 0; i < 256; ++i)
        {
            bytes.push_back(static_cast<Ice::Byte>(i));
        }
    }
    seqCheck<ByteSeq>("byte_seq", &OperationsPrx::opByteSeq, bytes);
    seqCheck<ShortSeq>("short_seq", &OperationsPrx::opShortSeq, {-32768, 0, 32767});
    seqCheck<IntSeq>("int_seq", &OperationsPrx::opIntSeq, {numeric_limits<int>::min(), 1, numeric_limits<int>::max()});
    IntSeq large;
    for(int i = -50000; i < 50000; ++i)
    {
        large.push_back(i);
    }
    seqCheck<IntSeq>("int_seq_large", &OperationsPrx::opIntSeq, large, false);
    seqCheck<LongSeq>("long_seq", &OperationsPrx::opLongSeq,
                      {numeric_limits<long long>::min(), 2, numeric_limits<long long>::max()});
    seqCheck<FloatSeq>("float_seq", &OperationsPrx::opFloatSeq, {0.5f, -1.25f, 3.0f});
    seqCheck<DoubleSeq>("double_seq", &OperationsPrx::opDoubleSeq, {1e300, -2.5, 0.0});
    seqCheck<StringSeq>("string_seq", &OperationsPrx::opStringSeq, {"a", "", "h\xc3\xa9llo"});
    seqCheck<ColorSeq>("color_seq", &OperationsPrx::opColorSeq, {Color::Red, Color::Blue, Color::Green});
    PointSeq points;
    for(int i = 0; i < 1000; ++i)
    {
        points.push_back(Point{i, -i});
    }
    seqCheck<PointSeq>("point_seq", &OperationsPrx::opPointSeq, points);
    seqCheck<RecordSeq>("record_seq", &OperationsPrx::opRecordSeq,
                        {record("a"), record("b", 2.5, true, {}), record("c", 2.5, true, {1, 2, 3}, Color::Red)});
    seqCheck<IntSeqSeq>("int_seq_seq", &OperationsPrx::opIntSeqSeq, {{1, 2}, {}, {3}});
    seqCheck<StringSeqSeq>("string_seq_seq", &OperationsPrx::opStringSeqSeq, {{"a", "b"}, {}, {"c"}});

    dictCheck<ByteBoolDict>("byte_bool_dict", &OperationsPrx::opByteBoolDict, {{1, true}, {2, false}},
                            {{2, true}, {255, false}});
    dictCheck<ShortIntDict>("short_int_dict", &OperationsPrx::opShortIntDict, {{-1, 1}, {2, 2}}, {{2, -2}, {32767, 3}});
    dictCheck<LongFloatDict>("long_float_dict", &OperationsPrx::opLongFloatDict, {{1LL << 40, 0.5f}},
                             {{-(1LL << 40), -0.25f}});
    dictCheck<IntDoubleDict>("int_double_dict", &OperationsPrx::opIntDoubleDict, {{1, 0.5}, {2, 1e300}}, {{2, -2.0}});
    dictCheck<StringStringDict>("string_string_dict", &OperationsPrx::opStringStringDict, {{"a", "x"}, {"b", ""}},
                                {{"b", "y"}, {"\xc3\xa9", "z"}});
    dictCheck<StringColorDict>("string_color_dict", &OperationsPrx::opStringColorDict, {{"r", Color::Red}},
                               {{"g", Color::Green}});
    dictCheck<ColorStringDict>("color_string_dict", &OperationsPrx::opColorStringDict,
                               {{Color::Red, "r"}, {Color::Blue, "b"}}, {{Color::Blue, "B"}});
    dictCheck<StringIntSeqDict>("string_int_seq_dict", &OperationsPrx::opStringIntSeqDict, {{"a", {1, 2}}, {"e", {}}},
                                {{"a", {3}}});
    dictCheck<PointStringDict>("point_string_dict", &OperationsPrx::opPointStringDict, {{Point{1, 2}, "a"}},
                               {{Point{-1, 0}, "b"}});
    dictCheck<StringRecordDict>("string_record_dict", &OperationsPrx::opStringRecordDict, {{"a", record("a")}},
                                {{"b", record("b", 2.5, true, {})}});

    check("ops.idempotent", [](const Ctx& c) { eqn(c.ops->opIdempotent(41), 42, "opIdempotent(41)"); });

    check("ops.amd", [](const Ctx& c) { eqs(c.ops->opAmd("x"), "amd:x", "opAmd"); });

    check("ops.context", [](const Ctx& c) {
        expect(c.ops->opContext().empty(), "no context");
        expect(c.ops->opContext(Ice::Context{{"c", "d"}}) == (Ice::Context{{"c", "d"}}), "per-call context");
        expect(c.ops->ice_context(Ice::Context{{"a", "b"}})->opContext() == (Ice::Context{{"a", "b"}}),
               "per-proxy context");
    });

    check("ops.proxy", [](const Ctx& c) {
        shared_ptr<Ice::ObjectPrx> p2;
        auto r = c.ops->opProxy(c.ops, p2);
        eqs(ident(r), "ops", "returned identity");
        eqs(ident(p2), "ops", "out identity");
        auto host = [](const shared_ptr<Ice::ObjectPrx>& p) {
            auto s = p->ice_getEndpoints()[0]->toString();
            return s.substr(0, s.find(" -t "));
        };
        eqs(host(r), host(c.ops), "endpoint");
        r->ice_ping();
        r = c.ops->opProxy(nullptr, p2);
        expect(!r && !p2, "null proxy");
    });

    check("ops.oneway", [](const Ctx& c) {
        int v = c.enc10 ? 10 : 11;
        c.ops->ice_oneway()->opOnewaySet(v);
        auto deadline = chrono::steady_clock::now() + chrono::seconds(5);
        while(c.ops->opOnewayGet() != v && chrono::steady_clock::now() < deadline)
        {
            this_thread::sleep_for(chrono::milliseconds(10));
        }
        eqn(c.ops->opOnewayGet(), v, "value set oneway");
    });

    // ------------------------------------------------------------ optionals
    optCheck<Ice::Byte>("byte", &OptionalsPrx::opOptByte, 200);
    optCheck<bool>("bool", &OptionalsPrx::opOptBool, true);
    optCheck<short>("short", &OptionalsPrx::opOptShort, -300);
    optCheck<int>("int", &OptionalsPrx::opOptInt, 1 << 20);
    optCheck<long long>("long", &OptionalsPrx::opOptLong, -(1LL << 50));
    optCheck<float>("float", &OptionalsPrx::opOptFloat, 0.25f);
    optCheck<double>("double", &OptionalsPrx::opOptDouble, -1e200);
    optCheck<string>("string", &OptionalsPrx::opOptString, "h\xc3\xa9llo");
    optCheck<Color>("enum", &OptionalsPrx::opOptColor, Color::Blue);
    optCheck<Point>("fixed_struct", &OptionalsPrx::opOptPoint, Point{5, -6});
    optCheck<Record>("var_struct", &OptionalsPrx::opOptRecord, record());
    optCheck<IntSeq>("int_seq", &OptionalsPrx::opOptIntSeq, {1, 2, 3});
    optCheck<StringSeq>("string_seq", &OptionalsPrx::opOptStringSeq, {"a", "", "b"});
    optCheck<PointSeq>("fixed_struct_seq", &OptionalsPrx::opOptPointSeq, {Point{1, 2}, Point{3, 4}});
    optCheck<RecordSeq>("var_struct_seq", &OptionalsPrx::opOptRecordSeq, {record("a"), record("b")});
    optCheck<ShortIntDict>("dict", &OptionalsPrx::opOptShortIntDict, {{1, 2}, {-3, 4}});
    optCheck<StringRecordDict>("struct_dict", &OptionalsPrx::opOptStringRecordDict, {{"a", record("a")}});

    check("opt.class", [](const Ctx& c) {
        Ice::optional<shared_ptr<Base>> p3;
        auto r = c.opt->opOptBase(make_shared<Base>("ob"), p3);
        if(c.enc10)
        {
            expect(!r && !p3, "opOptBase in 1.0: something came back");
        }
        else
        {
            expect(r && *r && (*r)->ice_id() == "::Conf::Base" && (*r)->b == "ob", "returned");
            expect(p3 && *p3 && (*p3)->b == "ob", "out");
        }
        r = c.opt->opOptBase(Ice::nullopt, p3);
        expect(!r && !p3, "unset: something came back");
    });

    check("opt.proxy", [](const Ctx& c) {
        Ice::optional<shared_ptr<OperationsPrx>> p3;
        auto r = c.opt->opOptProxy(c.ops, p3);
        if(c.enc10)
        {
            expect(!r && !p3, "opOptProxy in 1.0: something came back");
        }
        else
        {
            expect(r && ident(*r) == "ops", "returned");
            expect(p3 && ident(*p3) == "ops", "out");
        }
        r = c.opt->opOptProxy(Ice::nullopt, p3);
        expect(!r && !p3, "unset: something came back");
    });

    check("opt.mixed", [](const Ctx& c) {
        Ice::optional<string> os;
        int oa;
        Ice::optional<int> oi;
        eqn(c.opt->opMixed(string("s"), 5, 7, os, oa, oi), 5, "return");
        eqn(oa, 6, "oa");
        if(c.enc10)
        {
            expect(!os && !oi, "optionals in 1.0");
        }
        else
        {
            expect(os && *os == "s" && oi && *oi == 7, "optionals");
        }
        eqn(c.opt->opMixed(Ice::nullopt, -1, Ice::nullopt, os, oa, oi), -1, "return (unset)");
        eqn(oa, 0, "oa (unset)");
        expect(!os && !oi, "optionals (unset)");
    });

    check("opt.class_members_set", [](const Ctx& c) {
        // An Ice 3.8 server (whose WithOptionals has no obj: Ice 3.8 has no
        // optional classes) fails the dispatch of one whose obj is set
        // ("cannot skip optional class"): obj is sent to the others only.
        bool sendObj = c.server != "python38";
        Ice::optional<shared_ptr<Base>> obj;
        if(sendObj)
        {
            obj = make_shared<Base>("o");
        }
        auto w = make_shared<WithOptionals>(1, 2, string("s"), Point{1, 2}, IntSeq{1, 2}, Color::Blue, record(), obj);
        auto r = c.opt->opWithOptionals(w);
        expect(r && r->ice_id() == "::Conf::WithOptionals", "type");
        eqn(r->req, 1, "req");
        if(c.enc10)
        {
            expect(!r->i && !r->s && !r->p && !r->seq && !r->c && !r->r && !r->obj, "members in 1.0");
        }
        else
        {
            expect(r->i && *r->i == 2 && r->s && *r->s == "s" && r->p && *r->p == (Point{1, 2}) && r->seq &&
                       *r->seq == (IntSeq{1, 2}) && r->c && *r->c == Color::Blue && r->r && *r->r == record(),
                   "members");
            if(sendObj)
            {
                expect(r->obj && *r->obj && (*r->obj)->b == "o", "obj");
            }
            else
            {
                expect(!r->obj, "obj");
            }
        }
    });

    check("opt.class_members_unset", [](const Ctx& c) {
        auto r = c.opt->opWithOptionals(make_shared<WithOptionals>(3, Ice::nullopt, Ice::nullopt, Ice::nullopt,
                                                                   Ice::nullopt, Ice::nullopt, Ice::nullopt,
                                                                   Ice::nullopt));
        eqn(r->req, 3, "req");
        expect(!r->i && !r->s && !r->p && !r->seq && !r->c && !r->r && !r->obj, "members");
    });

    check("opt.exception", [](const Ctx& c) {
        auto e = raises<OptError>([&] { c.opt->opOptError(1, 2, string("s")); }, "OptError");
        eqn(e.req, 1, "req");
        if(c.enc10)
        {
            expect(!e.i && !e.s, "optionals in 1.0");
        }
        else
        {
            expect(e.i && *e.i == 2 && e.s && *e.s == "s", "optionals");
        }
        auto e2 = raises<OptError>([&] { c.opt->opOptError(4, Ice::nullopt, Ice::nullopt); }, "OptError");
        eqn(e2.req, 4, "req");
        expect(!e2.i && !e2.s, "optionals (unset)");
    });

    // ------------------------------------------------------------ objects
    check("obj.base", [](const Ctx& c) {
        shared_ptr<Base> p2;
        auto r = c.obj->opBase(make_shared<Base>("b"), p2);
        expect(r && r->ice_id() == "::Conf::Base" && r->b == "b", "returned");
        expect(r == p2, "the returned and out instances are not one");
    });

    check("obj.derived", [](const Ctx& c) {
        shared_ptr<Base> p2;
        auto r = c.obj->opBase(derived(), p2);
        sameDerived(r, "d", 4, "returned");
        expect(r == p2, "the returned and out instances are not one");
    });

    check("obj.null", [](const Ctx& c) {
        shared_ptr<Base> p2 = make_shared<Base>("x");
        auto r = c.obj->opBase(nullptr, p2);
        expect(!r && !p2, "opBase(null)");
    });

    check("obj.compact_id", [](const Ctx& c) {
        auto r = c.obj->opCompact(make_shared<Compact>("c", -9));
        expect(r && r->ice_id() == "::Conf::Compact" && r->b == "c" && r->c == -9, "opCompact");
        shared_ptr<Base> p2;
        auto b = dynamic_pointer_cast<Compact>(c.obj->opBase(make_shared<Compact>("as base", 1LL << 40), p2));
        expect(b && b->c == 1LL << 40, "opBase(Compact)");
    });

    check("obj.shared", [](const Ctx& c) {
        auto x = make_shared<Base>("x");
        auto r = c.obj->opPair(make_shared<Pair>(x, x));
        expect(r->first && r->first == r->second && r->first->b == "x", "first and second are not one instance");
    });

    check("obj.distinct", [](const Ctx& c) {
        auto r = c.obj->opPair(make_shared<Pair>(make_shared<Base>("a"), derived("b")));
        expect(r->first != r->second, "distinct instances came back as one");
        eqs(r->first->b, "a", "first");
        sameDerived(r->second, "b", 4, "second");
    });

    check("obj.seq", [](const Ctx& c) {
        auto d = derived();
        auto r = c.obj->opBaseSeq(BaseSeq{make_shared<Base>("a"), d, nullptr, d});
        eqn(r.size(), size_t(4), "length");
        expect(r[0]->ice_id() == "::Conf::Base" && r[0]->b == "a", "[0]");
        sameDerived(r[1], "d", 4, "[1]");
        expect(!r[2], "[2] is not null");
        expect(r[3] == r[1], "[1] and [3] are not one instance");
    });

    check("obj.dict", [](const Ctx& c) {
        auto d = derived();
        auto r = c.obj->opBaseDict(StringBaseDict{{"a", make_shared<Base>("a")}, {"b", d}, {"c", d}, {"n", nullptr}});
        eqn(r.size(), size_t(4), "size");
        eqs(r["a"]->b, "a", "a");
        sameDerived(r["b"], "d", 4, "b");
        expect(r["b"] == r["c"], "b and c are not one instance");
        expect(!r["n"], "n is not null");
    });

    check("obj.struct_member", [](const Ctx& c) {
        auto r = c.obj->opCarrier(Carrier{"l", derived()});
        eqs(r.label, "l", "label");
        sameDerived(r.obj, "d", 4, "obj");
        r = c.obj->opCarrier(Carrier{"n", nullptr});
        expect(!r.obj, "null obj");
    });

    check("obj.value", [](const Ctx& c) {
        sameDerived(c.obj->opValue(derived()), "d", 4, "opValue(Derived)");
        expect(!c.obj->opValue(nullptr), "opValue(null)");
        auto n = dynamic_pointer_cast<Node>(c.obj->opValue(make_shared<Node>(1, nullptr)));
        expect(n && n->value == 1, "opValue(Node)");
    });

    check("obj.all_types", [](const Ctx& c) {
        auto a = make_shared<AllTypes>(true, 7, -7, 70000, -(1LL << 40), 0.5f, 1e100, "all", Color::Green,
                                       Level::High, Point{9, 8}, record(), IntSeq{4, 5},
                                       StringStringDict{{"k", "v"}}, derived(), c.ops);
        auto r = c.obj->opAllTypes(a);
        expect(r->b == a->b && r->y == a->y && r->s == a->s && r->i == a->i && r->l == a->l && r->f == a->f &&
                   r->d == a->d && r->str == a->str && r->c == a->c && r->lv == a->lv && r->p == a->p &&
                   r->r == a->r && r->seq == a->seq && r->dict == a->dict,
               "members");
        sameDerived(r->obj, "d", 4, "obj");
        eqs(ident(r->prx), "ops", "prx");
    });

    check("obj.chain", [](const Ctx& c) {
        auto got = nodes(c.obj->makeChain(10));
        eqn(got.size(), size_t(10), "makeChain(10) length");
        for(size_t i = 0; i < got.size(); ++i)
        {
            eqn(got[i]->value, int(i + 1), "value");
        }
        auto chain = make_shared<Node>(1, make_shared<Node>(2, make_shared<Node>(3, nullptr)));
        auto echoed = nodes(c.obj->opNode(chain));
        expect(echoed.size() == 3 && echoed[0]->value == 1 && echoed[2]->value == 3, "opNode");
        eqn(c.obj->countNodes(chain), 3, "countNodes");
    });

    check("obj.deep_chain", [](const Ctx& c) {
        // Deeper than Ice.ClassGraphDepthMax (100).
        raises<Ice::MarshalException>([&] { c.obj->makeChain(150); }, "MarshalException");
        eqn(nodes(c.obj->makeChain(90)).size(), size_t(90), "makeChain(90)");
    });

    auto chainOf = [](int n) {
        shared_ptr<Node> head;
        for(int i = n; i > 0; --i)
        {
            head = make_shared<Node>(i, head);
        }
        return head;
    };

    check("obj.deep_chain_send", [chainOf](const Ctx& c) {
        raises<Ice::UnknownLocalException>([&] { c.obj->countNodes(chainOf(150)); }, "UnknownLocalException");
        eqn(c.obj->countNodes(chainOf(90)), 90, "countNodes(chain of 90)");
    });

    auto cycle = [] {
        auto a = make_shared<Node>(1, nullptr);
        a->next = make_shared<Node>(2, a);
        return a;
    };

    check("obj.cycle_send", [cycle](const Ctx& c) {
        auto a = cycle();
        try
        {
            if(c.refuses(c.server))
            {
                auto e = raises<Ice::UnknownLocalException>([&] { c.obj->countNodes(a); }, "UnknownLocalException");
                expect(e.unknown.find("cycle") != string::npos || e.unknown.find("Marshal") != string::npos,
                       "reason: " + e.unknown);
            }
            else
            {
                eqn(c.obj->countNodes(a), 2, "countNodes(cycle)");
            }
        }
        catch(...)
        {
            breakCycle(a);
            throw;
        }
        breakCycle(a);
    });

    check("obj.cycle_return", [](const Ctx& c) {
        if(c.refuses("cpp"))
        {
            raises<Ice::MarshalException>([&] { c.obj->makeCycle(3); }, "MarshalException");
        }
        else
        {
            auto n = c.obj->makeCycle(3);
            auto ns = nodes(n);
            bool ok = ns.size() == 1000 && ns[0]->value == 1 && ns[1]->value == 2 && ns[2]->value == 3 &&
                      n->next->next->next == n;
            breakCycle(n);
            expect(ok, "not a cycle of 1, 2, 3");
        }
    });

    check("obj.cycle_echo", [](const Ctx& c) {
        auto n = make_shared<Node>(5, nullptr);
        n->next = n;
        try
        {
            if(c.refuses(c.server, true))
            {
                raises<Ice::UnknownLocalException>([&] { c.obj->opNode(n); }, "UnknownLocalException");
            }
            else if(c.refuses("cpp", true))
            {
                raises<Ice::MarshalException>([&] { c.obj->opNode(n); }, "MarshalException");
            }
            else
            {
                auto r = c.obj->opNode(n);
                bool ok = r->next == r && r->value == 5;
                r->next = nullptr;
                expect(ok, "self-loop");
            }
        }
        catch(...)
        {
            n->next = nullptr;
            throw;
        }
        n->next = nullptr;
    });

    check("obj.sliced_format", [](const Ctx& c) {
        sameDerived(c.obj->opBaseSliced(derived()), "d", 4, "opBaseSliced(Derived)");
        eqs(c.obj->opBaseSliced(make_shared<Base>("b"))->b, "b", "opBaseSliced(Base)");
    });

    // ------------------------------------------------------------ exceptions
    check("exc.base", [](const Ctx& c) {
        try
        {
            c.exc->throwBase("r");
            throw Failed("no exception");
        }
        catch(const DerivedError&)
        {
            throw Failed("a DerivedError");
        }
        catch(const BaseError& e)
        {
            eqs(e.reason, "r", "reason");
        }
    });

    check("exc.derived", [](const Ctx& c) {
        auto e = raises<DerivedError>([&] { c.exc->throwDerived("d", 3); }, "DerivedError");
        eqs(e.reason, "d", "reason");
        eqn(e.code, 3, "code");
        eqs(e.ice_id(), "::Conf::DerivedError", "ice_id");
        raises<BaseError>([&] { c.exc->throwDerived("d", 3); }, "BaseError");
    });

    check("exc.derived_declared", [](const Ctx& c) {
        auto e = raises<DerivedError>([&] { c.exc->throwDerivedAsDerived("dd", -3); }, "DerivedError");
        expect(e.reason == "dd" && e.code == -3, "DerivedError");
    });

    check("exc.class_member", [](const Ctx& c) {
        auto e = raises<ClassError>([&] { c.exc->throwClassError(derived()); }, "ClassError");
        eqs(e.reason, "class", "reason");
        sameDerived(e.obj, "d", 4, "obj");
        auto e2 = raises<ClassError>([&] { c.exc->throwClassError(nullptr); }, "ClassError");
        expect(!e2.obj, "null obj");
    });

    check("exc.other", [](const Ctx& c) {
        auto e = raises<Ice::UnknownUserException>([&] { c.exc->throwOther(4); }, "UnknownUserException");
        expect(e.unknown.find("OtherError") != string::npos, "unknown: " + e.unknown);
    });

    check("exc.undeclared", [](const Ctx& c) {
        auto e = raises<Ice::UnknownUserException>([&] { c.exc->throwUndeclared(4); }, "UnknownUserException");
        expect(e.unknown.find("OtherError") != string::npos, "unknown: " + e.unknown);
    });

    check("exc.non_ice", [](const Ctx& c) {
        raises<Ice::UnknownException>([&] { c.exc->throwNonIce(); }, "UnknownException");
    });

    check("exc.not_exist", [](const Ctx& c) {
        raises<Ice::ObjectNotExistException>([&] { c.exc->throwNotExist(); }, "ObjectNotExistException");
    });

    check("exc.nothing", [](const Ctx& c) { c.exc->throwNothing(); });

    check("exc.object_not_exist", [](const Ctx& c) {
        raises<Ice::ObjectNotExistException>([&] { c.prx<OperationsPrx>("missing")->opVoid(); },
                                             "ObjectNotExistException");
    });

    check("exc.facet_not_exist", [](const Ctx& c) {
        raises<Ice::FacetNotExistException>([&] { Ice::uncheckedCast<OperationsPrx>(c.ops, "nofacet")->opVoid(); },
                                            "FacetNotExistException");
    });

    check("exc.operation_not_exist", [](const Ctx& c) {
        raises<Ice::OperationNotExistException>([&] { Ice::uncheckedCast<UnimplementedPrx>(c.exc)->missing(); },
                                                "OperationNotExistException");
    });

    check("exc.server_derived_compact", [](const Ctx& c) {
        if(c.slicedExceptions())
        {
            auto e = raises<DerivedError>([&] { c.exc->throwServerDerived(); }, "DerivedError");
            expect(e.reason == "server" && e.code == 7, "DerivedError");
        }
        else
        {
            raises<Ice::UnknownUserException>([&] { c.exc->throwServerDerived(); }, "UnknownUserException");
        }
    });

    check("exc.shape_error_compact", [](const Ctx& c) {
        if(c.slicedExceptions())
        {
            auto e = raises<ShapeError>([&] { c.exc->throwShapeError(); }, "ShapeError");
            plainShape(e.shape, "c", "shape");
        }
        else
        {
            raises<Ice::NoValueFactoryException>([&] { c.exc->throwShapeError(); }, "NoValueFactoryException");
        }
    });

    // ------------------------------------------------------------ sliced exceptions
    check("sexc.server_derived", [](const Ctx& c) {
        auto e = raises<DerivedError>([&] { c.sexc->throwServerDerived(); }, "DerivedError");
        expect(e.reason == "server" && e.code == 7, "DerivedError");
        eqs(e.ice_id(), "::Conf::DerivedError", "ice_id");
    });

    check("sexc.server_base", [](const Ctx& c) {
        auto e = raises<BaseError>([&] { c.sexc->throwServerBase(); }, "BaseError");
        eqs(e.ice_id(), "::Conf::BaseError", "ice_id");
        eqs(e.reason, "server", "reason");
    });

    check("sexc.server_class", [](const Ctx& c) {
        auto e = raises<BaseError>([&] { c.sexc->throwServerClass(); }, "BaseError");
        eqs(e.ice_id(), "::Conf::BaseError", "ice_id");
        eqs(e.reason, "classes", "reason");
    });

    check("sexc.shape_error", [](const Ctx& c) {
        auto e = raises<ShapeError>([&] { c.sexc->throwShapeError(); }, "ShapeError");
        plainShape(e.shape, "c", "shape");
    });

    check("sexc.isolated", [](const Ctx& c) {
        // Nothing in the exception is known. In 1.1 the last slice says so
        // and the client raises UnknownUserException, except from an Ice 3.7
        // C++11 server, which never flags the last slice of a user
        // exception; 1.0 has no such flag: the client reads past the end.
        if(c.enc10 || c.server == "cpp")
        {
            raises<Ice::UnmarshalOutOfBoundsException>([&] { c.sexc->throwIsolated(); },
                                                       "UnmarshalOutOfBoundsException");
        }
        else
        {
            raises<Ice::UnknownUserException>([&] { c.sexc->throwIsolated(); }, "UnknownUserException");
        }
    });

    check("sexc.known", [](const Ctx& c) {
        auto e = raises<DerivedError>([&] { c.sexc->throwKnown(); }, "DerivedError");
        expect(e.reason == "known" && e.code == 9, "DerivedError");
    });

    // ------------------------------------------------------------ sliced objects
    check("sobj.circle", [](const Ctx& c) { plainShape(c.sobj->getCircle(), "circle", "getCircle"); });
    check("sobj.ring", [](const Ctx& c) { plainShape(c.sobj->getRing(), "ring", "getRing"); });
    check("sobj.compact_id", [](const Ctx& c) { plainShape(c.sobj->getSquare(), "square", "getSquare"); });

    check("sobj.unknown", [](const Ctx& c) {
        if(c.enc10)
        {
            raises<Ice::NoValueFactoryException>([&] { c.sobj->getHidden(); }, "NoValueFactoryException");
        }
        else
        {
            auto v = c.sobj->getHidden();
            expect(dynamic_pointer_cast<Ice::UnknownSlicedValue>(v) != nullptr, "not an UnknownSlicedValue");
            eqs(v->ice_id(), "::Conf::Hidden", "ice_id");
        }
    });

    check("sobj.linked", [](const Ctx& c) {
        shared_ptr<Shape> other;
        auto r = c.sobj->getLinked(other);
        plainShape(r, "c", "returned");
        plainShape(other, "s2", "other");
    });

    check("sobj.seq", [](const Ctx& c) {
        auto s = c.sobj->getShapes();
        eqn(s.size(), size_t(5), "length");
        plainShape(s[0], "c", "[0]");
        plainShape(s[1], "plain", "[1]");
        expect(s[2] == s[0], "[0] and [2] are not one instance");
        expect(!s[3], "[3] is not null");
        plainShape(s[4], "ring", "[4]");
    });

    check("sobj.dict", [](const Ctx& c) {
        auto d = c.sobj->getShapeDict();
        eqn(d.size(), size_t(3), "size");
        plainShape(d[1], "c", "1");
        expect(d[1] == d[2], "1 and 2 are not one instance");
        plainShape(d[3], "plain", "3");
    });

    check("sobj.preserved", [](const Ctx& c) {
        auto k = c.sobj->getKeeper();
        expect(k && k->ice_id() == "::Conf::Keeper" && k->k == "keeper", "getKeeper");
        eqs(c.sobj->checkKeeper(k), c.enc10 ? "Keeper:keeper" : "KeeperDerived:keeper:x:kb:kl", "checkKeeper");
    });

    check("sobj.not_preserved", [](const Ctx& c) {
        eqs(c.sobj->checkShape(c.sobj->getCircle()), "::Conf::Shape:circle", "checkShape(getCircle())");
    });

    check("sobj.known_derived", [](const Ctx& c) { sameDerived(c.sobj->getDerived(), "d", 5, "getDerived"); });

    check("sobj.unknown_optionals", [](const Ctx& c) {
        auto w = c.sobj->getMoreOptionals();
        expect(w && w->ice_id() == "::Conf::WithOptionals", "not a plain WithOptionals");
        eqn(w->req, 1, "req");
        if(c.enc10)
        {
            expect(!w->i, "i in 1.0");
        }
        else
        {
            expect(w->i && *w->i == 2, "i");
        }
        expect(!w->s, "s");
    });

    check("cobj.circle", [](const Ctx& c) {
        if(c.enc10)
        {
            plainShape(c.cobj->getCircle(), "circle", "getCircle in 1.0");
        }
        else
        {
            raises<Ice::NoValueFactoryException>([&] { c.cobj->getCircle(); }, "NoValueFactoryException");
        }
    });

    check("cobj.unknown", [](const Ctx& c) {
        raises<Ice::NoValueFactoryException>([&] { c.cobj->getHidden(); }, "NoValueFactoryException");
    });

    check("cobj.circle_sliced", [](const Ctx& c) {
        plainShape(c.cobj->getCircleSliced(), "circle", "getCircleSliced");
    });

    check("cobj.known_derived", [](const Ctx& c) { sameDerived(c.cobj->getDerived(), "d", 5, "getDerived"); });

    // ------------------------------------------------------------ relayed exceptions
    check("relay.preserved", [](const Ctx& c) {
        if(c.enc10 || c.server == "python38")
        {
            // 1.0 has no preserved slices, Ice 3.8 no preserved exception
            // slices: the server relays what it knows.
            auto e = raises<PreservedError>([&] { c.relaying->relayPreserved(c.relay); }, "PreservedError");
            eqs(e.ice_id(), "::Conf::PreservedError", "ice_id");
            eqs(e.p, "pres", "p");
        }
        else
        {
            auto e = raises<ClientPreservedError>([&] { c.relaying->relayPreserved(c.relay); },
                                                  "ClientPreservedError");
            eqs(e.p, "pres", "p");
            eqs(e.extra, "extra", "extra");
            expect(e.obj && e.obj->b == "rb", "obj");
        }
    });

    check("relay.unpreserved", [](const Ctx& c) {
        auto e = raises<DerivedError>([&] { c.relaying->relayUnpreserved(c.relay); }, "DerivedError");
        eqs(e.ice_id(), "::Conf::DerivedError", "ice_id");
        eqs(e.reason, "plain", "reason");
        eqn(e.code, 3, "code");
    });

    // ------------------------------------------------------------ facets and default servants
    check("facet.default", [](const Ctx& c) { eqs(c.facet("fct")->which(), "fct:fct:", "fct"); });
    check("facet.named", [](const Ctx& c) { eqs(c.facet("fct", "b")->which(), "fct-b:fct:b", "fct -f b"); });
    check("facet.fallback", [](const Ctx& c) {
        // fct has no facet x: the default servant of category "" answers.
        eqs(c.facet("fct", "x")->which(), "any:fct:x", "fct -f x");
    });
    check("facet.category_default", [](const Ctx& c) {
        eqs(c.facet("dflt/n")->which(), "dflt:n:", "dflt/n");
        eqs(c.facet("dflt/n", "x")->which(), "dflt:n:x", "dflt/n -f x");
    });
    check("facet.any_default", [](const Ctx& c) {
        auto p = c.facet("locate", "x");
        p->ice_ping();
        eqs(p->which(), "any:locate:x", "locate -f x");
    });

    // ------------------------------------------------------------ servant locators
    check("loc.category", [](const Ctx& c) { eqs(c.located("loc/a")->whoAmI(), "loc/a", "loc/a"); });
    check("loc.default_category", [](const Ctx& c) { eqs(c.located("any-x")->whoAmI(), "/any-x", "any-x"); });
    check("loc.missing", [](const Ctx& c) {
        raises<Ice::ObjectNotExistException>([&] { c.located("loc/missing")->ice_ping(); }, "ObjectNotExistException");
        raises<Ice::ObjectNotExistException>([&] { c.located("nobody")->whoAmI(); }, "ObjectNotExistException");
    });
    check("loc.cookie", [](const Ctx& c) {
        c.located("loc/a")->whoAmI();
        eqs(c.located("loc/stats")->lastFinished(), "cookie:loc/a", "lastFinished");
    });
    check("loc.locate_user", [](const Ctx& c) {
        auto e = raises<LocatorError>([&] { c.located("loc/locate-user")->op(); }, "LocatorError");
        eqs(e.where, "locate", "where");
        raises<Ice::UnknownUserException>([&] { c.located("loc/locate-user")->whoAmI(); }, "UnknownUserException");
    });
    check("loc.locate_not_exist", [](const Ctx& c) {
        raises<Ice::ObjectNotExistException>([&] { c.located("loc/locate-not-exist")->whoAmI(); },
                                             "ObjectNotExistException");
    });
    check("loc.locate_local", [](const Ctx& c) {
        raises<Ice::UnknownLocalException>([&] { c.located("loc/locate-local")->whoAmI(); }, "UnknownLocalException");
    });
    check("loc.locate_other", [](const Ctx& c) {
        auto e = raises<Ice::UnknownException>([&] { c.located("loc/locate-other")->whoAmI(); }, "UnknownException");
        eqs(e.ice_id(), "::Ice::UnknownException", "ice_id");
    });
    check("loc.servant_user", [](const Ctx& c) {
        auto e = raises<LocatorError>([&] { c.located("loc/servant-user")->op(); }, "LocatorError");
        eqs(e.where, "servant", "where");
        eqs(c.located("loc/stats")->lastFinished(), "cookie:loc/servant-user", "lastFinished");
    });
    check("loc.finished_user", [](const Ctx& c) {
        auto e = raises<LocatorError>([&] { c.located("loc/finished-user")->op(); }, "LocatorError");
        eqs(e.where, "finished", "where");
    });
    check("loc.finished_not_exist", [](const Ctx& c) {
        raises<Ice::ObjectNotExistException>([&] { c.located("loc/finished-not-exist")->whoAmI(); },
                                             "ObjectNotExistException");
    });
    check("loc.finished_local", [](const Ctx& c) {
        raises<Ice::UnknownLocalException>([&] { c.located("loc/finished-local")->whoAmI(); },
                                           "UnknownLocalException");
    });
    check("loc.finished_other", [](const Ctx& c) {
        auto e = raises<Ice::UnknownException>([&] { c.located("loc/finished-other")->whoAmI(); }, "UnknownException");
        eqs(e.ice_id(), "::Ice::UnknownException", "ice_id");
    });
    check("loc.deactivate", [](const Ctx& c) {
        eqs(c.located("loc/stats")->destroyAdapter(), "gone", "destroyAdapter");
    });

    // ------------------------------------------------------------ value factories
    check("vf.interface_by_value", [](const Ctx& c) {
        // A communicator of its own, with a factory for ::Conf::Marker.
        Ice::CommunicatorHolder other(Ice::initialize());
        other->getValueFactoryManager()->add(
            [](const string&) { return make_shared<Ice::InterfaceByValue<Marker>>(); }, Marker::ice_staticId());
        auto v = c.prxOn<ValuesPrx>(other.communicator(), "vf")->getMarker();
        expect(dynamic_pointer_cast<Ice::InterfaceByValue<Marker>>(v) != nullptr, "not an InterfaceByValue");
        eqs(v->ice_id(), "::Conf::Marker", "ice_id");
    });
    check("vf.hooks_returned", [](const Ctx& c) {
        auto h = c.vf->getHooked();
        expect(dynamic_pointer_cast<HookedI>(h) != nullptr, "not made by the factory");
        expect(h->preMarshalled && h->postUnmarshalled, "(preMarshalled, postUnmarshalled)");
    });
    check("vf.hooks_sent", [](const Ctx& c) {
        eqs(c.vf->checkHooked(make_shared<HookedI>(false, false)), "true:true", "checkHooked");
    });

    // ------------------------------------------------------------ classes with operations
    check("cls.ops", [](const Ctx& c) {
        auto p = c.prx<LoudGreeterPrx>("cls");
        eqs(p->greet("x"), "hello, x", "greet");
        eqs(p->shout("hey"), "HEY!", "shout");
    });
    check("cls.type_ids", [](const Ctx& c) {
        auto p = c.prx<LoudGreeterPrx>("cls");
        auto ids = p->ice_ids();
        expect(ids == vector<string>{"::Conf::Greeter", "::Conf::LoudGreeter", "::Ice::Object"}, "ice_ids");
        eqs(p->ice_id(), "::Conf::LoudGreeter", "ice_id");
    });
    check("cls.checked_cast", [](const Ctx& c) {
        auto g = Ice::checkedCast<GreeterPrx>(c.prx<GreeterPrx>("cls"));
        expect(g != nullptr, "checkedCast to GreeterPrx");
        eqs(g->greet("y"), "hello, y", "greet");
    });

    // ------------------------------------------------------------ overridden built-in operations
    check("bi.ping", [](const Ctx& c) {
        auto p = c.prx<ObservedPrx>("obs");
        p->pings();
        p->ice_ping();
        p->ice_ping();
        eqs(p->pings(), "2:1", "pings (Nonmutating)");
    });
    check("bi.is_a", [](const Ctx& c) {
        auto p = c.prx<ObservedPrx>("obs");
        expect(p->ice_isA("::Conf::Extra"), "ice_isA(::Conf::Extra)");
        expect(p->ice_isA("::Conf::Observed"), "ice_isA(::Conf::Observed)");
        expect(!p->ice_isA("::Conf::Nope"), "ice_isA(::Conf::Nope)");
    });
    check("bi.ids", [](const Ctx& c) {
        auto p = c.prx<ObservedPrx>("obs");
        expect(p->ice_ids() == vector<string>{"::Conf::Extra", "::Conf::Observed", "::Ice::Object"}, "ice_ids");
        eqs(p->ice_id(), "::Conf::Observed", "ice_id");
    });

    // ------------------------------------------------------------ adapter deactivation
    check("deact.from_servant", [](const Ctx& c) {
        auto d = c.prx<DeactivationPrx>("deact");
        auto own = d->create()->ice_encodingVersion(d->ice_getEncodingVersion());
        own->ice_ping();
        own->deactivateSelf();
        expect(d->waitDeactivated(), "waitDeactivated");
        try
        {
            own->ice_ping();
            throw Failed("ice_ping after the deactivation: no exception");
        }
        catch(const Ice::LocalException&)
        {
        }
    });

    // ------------------------------------------------------------ optional classes and proxies: null vs unset
    check("optn.sent", [](const Ctx& c) {
        auto p = c.prx<OptionalNullsPrx>("optn");
        auto ops = c.prx<OperationsPrx>("ops");
        auto want = [&](const string& s) { return c.enc10 ? string("unset:unset") : s + ":" + s; };
        eqs(p->describe(Ice::nullopt, Ice::nullopt), want("unset"), "describe(unset)");
        eqs(p->describe(shared_ptr<Base>(), shared_ptr<OperationsPrx>()), want("null"), "describe(null)");
        eqs(p->describe(make_shared<Base>("s"), ops), want("set"), "describe(set)");
    });
    check("optn.returned", [](const Ctx& c) {
        auto p = c.prx<OptionalNullsPrx>("optn");
        for(const string state : {"unset", "null", "set"})
        {
            Ice::optional<shared_ptr<Base>> b;
            Ice::optional<shared_ptr<OperationsPrx>> o;
            p->make(state, b, o);
            string want = c.enc10 ? "unset" : state;
            eqs(nullState(b) + ":" + nullState(o), want + ":" + want, "make(" + state + ")");
        }
    });

    // ------------------------------------------------------------ connection info
    check("info.endpoint", [](const Ctx& c) {
        auto p = c.prx<InfoPrx>("info");
        auto info = dynamic_pointer_cast<Ice::TCPEndpointInfo>(p->ice_getConnection()->getEndpoint()->getInfo());
        expect(info != nullptr, "not a TCP endpoint");
        eqs(info->host, "127.0.0.1", "host");
        eqn(info->port, c.port, "port");
        eqn(info->timeout, 10000, "timeout");
        expect(!info->compress, "compress");
        // The server's endpoint timeout: Ice 3.7's default, or "none" from
        // an Ice 3.8 server, whose endpoints have no timeout.
        string timeout = c.server == "python38" ? "none" : "60000";
        eqs(p->endpointInfo(), "tcp:127.0.0.1:" + to_string(c.port) + ":" + timeout + ":false",
            "the server's endpoint");
    });
}

struct Config
{
    string name;
    bool enc10;
    bool cycles;
    bool objectsOnly;
};

}

int main(int argc, char* argv[])
{
    if(argc < 5)
    {
        cerr << "usage: client <port> <cycles port> <facets port> <cpp|python|floe>" << endl;
        return 2;
    }
    int port = atoi(argv[1]);
    int cyclesPort = atoi(argv[2]);
    int facetsPort = atoi(argv[3]);
    string server = argv[4];
    registerChecks();
    int passed = 0, failed = 0;
    Ice::CommunicatorHolder plain(Ice::initialize());
    Ice::InitializationData data;
    data.properties = Ice::createProperties();
    data.properties->setProperty("Ice.AcceptClassCycles", "1");
    Ice::CommunicatorHolder cyc(Ice::initialize(data));
    addHookedFactory(plain.communicator());
    addHookedFactory(cyc.communicator());
    auto plainRelay = relayProxy(plain.communicator());
    auto cycRelay = relayProxy(cyc.communicator());
    vector<Config> configs{
        {"1.1", false, false, false},
        {"1.0", true, false, false},
        {"1.1-cycles", false, true, true},
        {"1.0-cycles", true, true, true},
    };
    for(const auto& config : configs)
    {
        Ctx c;
        c.communicator = config.cycles ? cyc.communicator() : plain.communicator();
        c.port = config.cycles ? cyclesPort : port;
        c.facetsPort = facetsPort;
        c.enc10 = config.enc10;
        c.cycles = config.cycles;
        c.server = server;
        c.ops = c.prx<OperationsPrx>("ops");
        c.opt = c.prx<OptionalsPrx>("opt");
        c.obj = c.prx<ObjectsPrx>("obj");
        c.exc = c.prx<ExceptionsPrx>("exc");
        c.sexc = c.prx<SlicedExceptionsPrx>("sexc");
        c.sobj = c.prx<SlicedObjectsPrx>("sobj");
        c.cobj = c.prx<CompactObjectsPrx>("cobj");
        c.relaying = c.prx<RelayingPrx>("relaying");
        c.vf = c.prx<ValuesPrx>("vf");
        c.relay = (config.cycles ? cycRelay : plainRelay)
                      ->ice_encodingVersion(config.enc10 ? Ice::Encoding_1_0 : Ice::Encoding_1_1);
        for(const auto& ch : checks)
        {
            if(config.objectsOnly && ch.first.compare(0, 4, "obj.") != 0)
            {
                continue;
            }
            string label = config.name + "/" + ch.first;
            try
            {
                ch.second(c);
                ++passed;
                cout << "PASS " << label << endl;
            }
            catch(const Failed& e)
            {
                ++failed;
                cout << "FAIL " << label << ": " << e.what() << endl;
            }
            catch(const Ice::Exception& e)
            {
                ++failed;
                ostringstream os;
                os << e;
                string text = os.str();
                replace(text.begin(), text.end(), '\n', ' ');
                cout << "FAIL " << label << ": unexpected " << e.ice_id() << ": " << text.substr(0, 300) << endl;
            }
            catch(const std::exception& e)
            {
                ++failed;
                cout << "FAIL " << label << ": unexpected " << e.what() << endl;
            }
        }
    }
    cout << "SUMMARY " << passed << " passed, " << failed << " failed" << endl;
    return failed == 0 ? 0 : 1;
}
