// Ice 3.7 C++11 server of the floe conformance suite: the same servants as
// server.py.
//
//     server
//
// Serves every interface of Conformance.ice (with ServerOnly.ice's types) on
// two communicators, one with default properties and one with
// Ice.AcceptClassCycles=1, each on a free port of 127.0.0.1, with servant
// locators (Located); the first also has a second adapter of facets and
// default servants (Faceted). Prints "READY <port> <cycles port> <facets port>"
// and serves until stdin closes.
#include <Ice/Ice.h>
#include <Conformance.h>
#include <ServerOnly.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <mutex>
#include <set>
#include <stdexcept>

using namespace std;
using namespace Conf;

namespace
{

template<class T> T reversed(T v)
{
    reverse(v.begin(), v.end());
    return v;
}

template<class T> T merged(T p1, const T& p2)
{
    for(const auto& kv : p2)
    {
        p1[kv.first] = kv.second;
    }
    return p1;
}

class OperationsI : public Operations
{
public:
    void opVoid(const Ice::Current&) override {}
    Ice::Byte opByte(Ice::Byte p1, Ice::Byte p2, Ice::Byte& p3, const Ice::Current&) override
    {
        p3 = p2;
        return p1;
    }
    bool opBool(bool p1, bool p2, bool& p3, const Ice::Current&) override
    {
        p3 = p2;
        return p1;
    }
    long long opShortIntLong(short p1, int p2, long long p3, short& p4, int& p5, long long& p6,
                             const Ice::Current&) override
    {
        p4 = p1;
        p5 = p2;
        p6 = p3;
        return p3;
    }
    double opFloatDouble(float p1, double p2, float& p3, double& p4, const Ice::Current&) override
    {
        p3 = p1;
        p4 = p2;
        return p2;
    }
    string opString(string p1, string p2, string& p3, const Ice::Current&) override
    {
        p3 = p2 + p1;
        return p1 + p2;
    }
    Color opEnum(Color p1, Level p2, Level& p3, const Ice::Current&) override
    {
        p3 = p2;
        return p1;
    }
    Point opStruct(Point p1, Record p2, Record& p3, const Ice::Current&) override
    {
        p3 = move(p2);
        return p1;
    }
    Nested opNested(Nested p1, Nested& p2, const Ice::Current&) override
    {
        p2 = p1;
        return p1;
    }
    Defaults opDefaults(const Ice::Current&) override { return Defaults(); }
    Record opDefaultRecord(const Ice::Current&) override { return Record(); }

#define SEQ_OP(Name, Type)                                                   \
    Type Name(Type p1, Type& p2, const Ice::Current&) override               \
    {                                                                        \
        p2 = p1;                                                             \
        return reversed(move(p1));                                           \
    }
    SEQ_OP(opBoolSeq, BoolSeq)
    SEQ_OP(opByteSeq, ByteSeq)
    SEQ_OP(opShortSeq, ShortSeq)
    SEQ_OP(opIntSeq, IntSeq)
    SEQ_OP(opLongSeq, LongSeq)
    SEQ_OP(opFloatSeq, FloatSeq)
    SEQ_OP(opDoubleSeq, DoubleSeq)
    SEQ_OP(opStringSeq, StringSeq)
    SEQ_OP(opColorSeq, ColorSeq)
    SEQ_OP(opPointSeq, PointSeq)
    SEQ_OP(opRecordSeq, RecordSeq)
    SEQ_OP(opIntSeqSeq, IntSeqSeq)
    SEQ_OP(opStringSeqSeq, StringSeqSeq)
#undef SEQ_OP

#define DICT_OP(Name, Type)                                                  \
    Type Name(Type p1, Type p2, Type& p3, const Ice::Current&) override      \
    {                                                                        \
        p3 = p1;                                                             \
        return merged(move(p1), p2);                                         \
    }
    DICT_OP(opByteBoolDict, ByteBoolDict)
    DICT_OP(opShortIntDict, ShortIntDict)
    DICT_OP(opLongFloatDict, LongFloatDict)
    DICT_OP(opIntDoubleDict, IntDoubleDict)
    DICT_OP(opStringStringDict, StringStringDict)
    DICT_OP(opStringColorDict, StringColorDict)
    DICT_OP(opColorStringDict, ColorStringDict)
    DICT_OP(opStringIntSeqDict, StringIntSeqDict)
    DICT_OP(opPointStringDict, PointStringDict)
    DICT_OP(opStringRecordDict, StringRecordDict)
#undef DICT_OP

    int opIdempotent(int p, const Ice::Current&) override { return p + 1; }

    void opAmdAsync(string s, function<void(const string&)> response, function<void(exception_ptr)>,
                    const Ice::Current&) override
    {
        response("amd:" + s);
    }

    StringStringDict opContext(const Ice::Current& current) override { return current.ctx; }

    shared_ptr<OperationsPrx> opProxy(shared_ptr<OperationsPrx> p1, shared_ptr<Ice::ObjectPrx>& p2,
                                      const Ice::Current&) override
    {
        p2 = p1;
        return p1;
    }

    void opOnewaySet(int v, const Ice::Current&) override { _last = v; }
    int opOnewayGet(const Ice::Current&) override { return _last; }

private:
    atomic<int> _last{0};
};

class OptionalsI : public Optionals
{
public:
#define OPT_OP(Name, Type)                                                                    \
    Ice::optional<Type> Name(Ice::optional<Type> p1, Ice::optional<Type>& p3, const Ice::Current&) override \
    {                                                                                         \
        p3 = p1;                                                                              \
        return p1;                                                                            \
    }
    OPT_OP(opOptByte, Ice::Byte)
    OPT_OP(opOptBool, bool)
    OPT_OP(opOptShort, short)
    OPT_OP(opOptInt, int)
    OPT_OP(opOptLong, long long)
    OPT_OP(opOptFloat, float)
    OPT_OP(opOptDouble, double)
    OPT_OP(opOptString, string)
    OPT_OP(opOptColor, Color)
    OPT_OP(opOptPoint, Point)
    OPT_OP(opOptRecord, Record)
    OPT_OP(opOptIntSeq, IntSeq)
    OPT_OP(opOptStringSeq, StringSeq)
    OPT_OP(opOptPointSeq, PointSeq)
    OPT_OP(opOptRecordSeq, RecordSeq)
    OPT_OP(opOptShortIntDict, ShortIntDict)
    OPT_OP(opOptStringRecordDict, StringRecordDict)
    OPT_OP(opOptBase, shared_ptr<Base>)
    OPT_OP(opOptProxy, shared_ptr<OperationsPrx>)
#undef OPT_OP

    int opMixed(Ice::optional<string> s, int a, Ice::optional<int> i, Ice::optional<string>& os, int& oa,
                Ice::optional<int>& oi, const Ice::Current&) override
    {
        os = s;
        oa = a + 1;
        oi = i;
        return a;
    }

    shared_ptr<WithOptionals> opWithOptionals(shared_ptr<WithOptionals> w, const Ice::Current&) override { return w; }

    void opOptError(int req, Ice::optional<int> i, Ice::optional<string> s, const Ice::Current&) override
    {
        throw OptError(req, i, s);
    }
};

int countNodes(shared_ptr<Node> n)
{
    set<Node*> seen;
    while(n && seen.insert(n.get()).second)
    {
        n = n->next;
    }
    return static_cast<int>(seen.size());
}

shared_ptr<Node> chain(int n, bool cycle)
{
    vector<shared_ptr<Node>> nodes;
    for(int i = 0; i < n; ++i)
    {
        nodes.push_back(make_shared<Node>(i + 1, nullptr));
    }
    for(size_t i = 0; i + 1 < nodes.size(); ++i)
    {
        nodes[i]->next = nodes[i + 1];
    }
    if(nodes.empty())
    {
        return nullptr;
    }
    if(cycle)
    {
        nodes.back()->next = nodes.front();
    }
    return nodes.front();
}

class ObjectsI : public Objects
{
public:
    shared_ptr<Base> opBase(shared_ptr<Base> p1, shared_ptr<Base>& p2, const Ice::Current&) override
    {
        p2 = p1;
        return p1;
    }
    shared_ptr<Pair> opPair(shared_ptr<Pair> p, const Ice::Current&) override { return p; }
    BaseSeq opBaseSeq(BaseSeq p, const Ice::Current&) override { return p; }
    StringBaseDict opBaseDict(StringBaseDict p, const Ice::Current&) override { return p; }
    Carrier opCarrier(Carrier h, const Ice::Current&) override { return h; }
    shared_ptr<Ice::Value> opValue(shared_ptr<Ice::Value> v, const Ice::Current&) override { return v; }
    shared_ptr<AllTypes> opAllTypes(shared_ptr<AllTypes> a, const Ice::Current&) override { return a; }
    shared_ptr<Compact> opCompact(shared_ptr<Compact> c, const Ice::Current&) override { return c; }
    // A cycle sent back (when accepted) leaks here, as shared_ptr cycles do.
    shared_ptr<Node> opNode(shared_ptr<Node> n, const Ice::Current&) override { return n; }
    int countNodes(shared_ptr<Node> n, const Ice::Current&) override
    {
        int count = ::countNodes(n);
        breakCycle(n);
        return count;
    }
    shared_ptr<Node> makeCycle(int n, const Ice::Current&) override { return chain(n, true); }
    shared_ptr<Node> makeChain(int n, const Ice::Current&) override { return chain(n, false); }
    shared_ptr<Base> opBaseSliced(shared_ptr<Base> p, const Ice::Current&) override { return p; }

private:
    static void breakCycle(shared_ptr<Node> n)
    {
        set<Node*> seen;
        while(n && seen.insert(n.get()).second)
        {
            auto next = n->next;
            n->next = nullptr;
            n = next;
        }
    }
};

shared_ptr<Circle> circle() { return make_shared<Circle>("c", 1.0, nullptr, Ice::nullopt); }
shared_ptr<Circle> theCircle() { return make_shared<Circle>("circle", 2.5, nullptr, string("l")); }
shared_ptr<Derived> derived() { return make_shared<Derived>("d", 5, Point{1, 2}); }

class ExceptionsI : public Exceptions
{
public:
    void throwBase(string reason, const Ice::Current&) override { throw BaseError(reason); }
    void throwDerived(string reason, int code, const Ice::Current&) override { throw DerivedError(reason, code); }
    void throwDerivedAsDerived(string reason, int code, const Ice::Current&) override
    {
        throw DerivedError(reason, code);
    }
    void throwClassError(shared_ptr<Base> obj, const Ice::Current&) override { throw ClassError("class", obj); }
    void throwOther(int n, const Ice::Current&) override { throw OtherError(n); }
    void throwUndeclared(int n, const Ice::Current&) override { throw OtherError(n); }
    void throwNonIce(const Ice::Current&) override { throw runtime_error("not an Ice exception"); }
    void throwNotExist(const Ice::Current&) override { throw Ice::ObjectNotExistException(__FILE__, __LINE__); }
    void throwNothing(const Ice::Current&) override {}
    void throwServerDerived(const Ice::Current&) override { throw ServerDerivedError("server", 7, "detail"); }
    void throwShapeError(const Ice::Current&) override { throw ShapeError(circle()); }
};

class SlicedExceptionsI : public SlicedExceptions
{
public:
    void throwServerDerived(const Ice::Current&) override { throw ServerDerivedError("server", 7, "detail"); }
    void throwServerBase(const Ice::Current&) override { throw ServerBaseError("server", 8); }
    void throwServerClass(const Ice::Current&) override
    {
        throw ServerClassError("classes", circle(), make_shared<Base>("b"));
    }
    void throwShapeError(const Ice::Current&) override { throw ShapeError(circle()); }
    void throwIsolated(const Ice::Current&) override { throw IsolatedError(3); }
    void throwKnown(const Ice::Current&) override { throw DerivedError("known", 9); }
};

class SlicedObjectsI : public SlicedObjects
{
public:
    shared_ptr<Shape> getCircle(const Ice::Current&) override { return theCircle(); }
    shared_ptr<Shape> getRing(const Ice::Current&) override
    {
        return make_shared<Ring>("ring", 3.0, make_shared<Shape>("in"), Ice::nullopt, 0.5);
    }
    shared_ptr<Shape> getSquare(const Ice::Current&) override { return make_shared<Square>("square", 4.0); }
    shared_ptr<Ice::Value> getHidden(const Ice::Current&) override { return make_shared<Hidden>("hidden"); }
    shared_ptr<Shape> getLinked(shared_ptr<Shape>& other, const Ice::Current&) override
    {
        other = make_shared<Shape>("s2");
        return make_shared<Circle>("c", 1.0, other, Ice::nullopt);
    }
    ShapeSeq getShapes(const Ice::Current&) override
    {
        auto c = circle();
        return ShapeSeq{c, make_shared<Shape>("plain"), c, nullptr,
                        make_shared<Ring>("ring", 3.0, nullptr, Ice::nullopt, 0.5)};
    }
    IntShapeDict getShapeDict(const Ice::Current&) override
    {
        auto c = circle();
        return IntShapeDict{{1, c}, {2, c}, {3, make_shared<Shape>("plain")}};
    }
    shared_ptr<Keeper> getKeeper(const Ice::Current&) override
    {
        return make_shared<KeeperDerived>("keeper", "x", make_shared<Base>("kb"), string("kl"));
    }
    string checkKeeper(shared_ptr<Keeper> k, const Ice::Current&) override
    {
        if(!k)
        {
            return "null";
        }
        if(auto d = dynamic_pointer_cast<KeeperDerived>(k))
        {
            return "KeeperDerived:" + d->k + ":" + d->extra + ":" + (d->obj ? d->obj->b : string("null")) + ":" +
                   (d->label ? *d->label : string("unset"));
        }
        return "Keeper:" + k->k;
    }
    string checkShape(shared_ptr<Shape> s, const Ice::Current&) override
    {
        return s ? s->ice_id() + ":" + s->name : string("null");
    }
    shared_ptr<Base> getDerived(const Ice::Current&) override { return derived(); }
    shared_ptr<WithOptionals> getMoreOptionals(const Ice::Current&) override
    {
        return make_shared<WithMoreOptionals>(1, 2, Ice::nullopt, Ice::nullopt, Ice::nullopt, Ice::nullopt,
                                              Ice::nullopt, Ice::nullopt, string("x"), 3);
    }
};

class CompactObjectsI : public CompactObjects
{
public:
    shared_ptr<Shape> getCircle(const Ice::Current&) override { return theCircle(); }
    shared_ptr<Ice::Value> getHidden(const Ice::Current&) override { return make_shared<Hidden>("hidden"); }
    shared_ptr<Shape> getCircleSliced(const Ice::Current&) override { return theCircle(); }
    shared_ptr<Base> getDerived(const Ice::Current&) override { return derived(); }
};

class RelayingI : public Relaying
{
public:
    void relayPreserved(shared_ptr<RelayPrx> r, const Ice::Current&) override { r->raisePreserved(); }
    void relayUnpreserved(shared_ptr<RelayPrx> r, const Ice::Current&) override { r->raiseUnpreserved(); }
};

class FacetedI : public Faceted
{
public:
    explicit FacetedI(string name) : _name(move(name)) {}
    string which(const Ice::Current& current) override { return _name + ":" + current.id.name + ":" + current.facet; }

private:
    const string _name;
};

struct LocatorState
{
    mutex lock;
    string last;
};

class GoneLocator : public Ice::ServantLocator
{
public:
    explicit GoneLocator(vector<string>& got) : _got(got) {}
    shared_ptr<Ice::Object> locate(const Ice::Current&, shared_ptr<void>&) override { return nullptr; }
    void finished(const Ice::Current&, const shared_ptr<Ice::Object>&, const shared_ptr<void>&) override {}
    void deactivate(const string& category) override { _got.push_back(category); }

private:
    vector<string>& _got;
};

class LocatedI : public Located
{
public:
    explicit LocatedI(shared_ptr<LocatorState> state) : _state(move(state)) {}
    string whoAmI(const Ice::Current& current) override { return current.id.category + "/" + current.id.name; }
    void op(const Ice::Current& current) override
    {
        if(current.id.name == "servant-user")
        {
            throw LocatorError("servant");
        }
    }
    string lastFinished(const Ice::Current&) override
    {
        lock_guard<mutex> guard(_state->lock);
        return _state->last;
    }
    string destroyAdapter(const Ice::Current& current) override
    {
        vector<string> got;
        // No endpoints: destroying an adapter that listens needs the server
        // thread pool this dispatch holds.
        auto adapter = current.adapter->getCommunicator()->createObjectAdapter("");
        adapter->addServantLocator(make_shared<GoneLocator>(got), "gone");
        adapter->destroy();
        string out;
        for(const auto& c : got)
        {
            out += (out.empty() ? "" : ",") + c;
        }
        return out;
    }

private:
    shared_ptr<LocatorState> _state;
};

// What a locator raises for an identity named `<where>-<kind>`.
void fail(const string& name, const string& where)
{
    if(name == where + "-user")
    {
        throw LocatorError(where);
    }
    if(name == where + "-not-exist")
    {
        throw Ice::ObjectNotExistException(__FILE__, __LINE__);
    }
    if(name == where + "-local")
    {
        throw Ice::SocketException(__FILE__, __LINE__);
    }
    if(name == where + "-other")
    {
        throw runtime_error(where);
    }
}

class LocatorI : public Ice::ServantLocator
{
public:
    LocatorI(shared_ptr<Ice::Object> servant, shared_ptr<LocatorState> state) :
        _servant(move(servant)), _state(move(state))
    {
    }

    shared_ptr<Ice::Object> locate(const Ice::Current& current, shared_ptr<void>& cookie) override
    {
        const string& name = current.id.name;
        if(name == "missing" || (current.id.category.empty() && name.compare(0, 4, "any-") != 0))
        {
            return nullptr;
        }
        fail(name, "locate");
        cookie = make_shared<string>("cookie:" + current.id.category + "/" + name);
        return _servant;
    }

    void finished(const Ice::Current& current, const shared_ptr<Ice::Object>&, const shared_ptr<void>& cookie) override
    {
        {
            lock_guard<mutex> guard(_state->lock);
            _state->last = *static_pointer_cast<string>(cookie);
        }
        fail(current.id.name, "finished");
    }

    void deactivate(const string&) override {}

private:
    shared_ptr<Ice::Object> _servant;
    shared_ptr<LocatorState> _state;
};

class HookedI : public Hooked
{
public:
    using Hooked::Hooked;
    void ice_preMarshal() override { preMarshalled = true; }
    void ice_postUnmarshal() override { postUnmarshalled = true; }
};

class ValuesI : public Values
{
public:
    shared_ptr<Ice::Value> getMarker(const Ice::Current&) override
    {
        return make_shared<Ice::InterfaceByValue<Marker>>();
    }
    shared_ptr<Hooked> getHooked(const Ice::Current&) override { return make_shared<HookedI>(false, false); }
    string checkHooked(shared_ptr<Hooked> h, const Ice::Current&) override
    {
        if(!h)
        {
            return "null";
        }
        return string(h->preMarshalled ? "true" : "false") + ":" + (h->postUnmarshalled ? "true" : "false");
    }
};

class LoudGreeterI : public LoudGreeterDisp
{
public:
    string greet(string name, const Ice::Current&) override { return "hello, " + name; }
    string shout(string s, const Ice::Current&) override
    {
        transform(s.begin(), s.end(), s.begin(), [](char ch) { return ch >= 'a' && ch <= 'z' ? ch - 32 : ch; });
        return s + "!";
    }
};

class ObservedI : public Observed
{
public:
    void ice_ping(const Ice::Current& current) const override
    {
        lock_guard<mutex> guard(_lock);
        ++_count;
        _mode = static_cast<int>(current.mode);
    }
    bool ice_isA(string id, const Ice::Current& current) const override
    {
        return id == "::Conf::Extra" || Observed::ice_isA(move(id), current);
    }
    vector<string> ice_ids(const Ice::Current& current) const override
    {
        auto ids = Observed::ice_ids(current);
        ids.push_back("::Conf::Extra");
        sort(ids.begin(), ids.end());
        return ids;
    }
    string pings(const Ice::Current&) override
    {
        lock_guard<mutex> guard(_lock);
        auto out = to_string(_count) + ":" + to_string(_mode);
        _count = 0;
        _mode = -1;
        return out;
    }

private:
    mutable mutex _lock;
    mutable int _count = 0;
    mutable int _mode = -1;
};

class DeactivatingI : public Deactivating
{
public:
    void deactivateSelf(const Ice::Current& current) override { current.adapter->deactivate(); }
};

class DeactivationI : public Deactivation
{
public:
    shared_ptr<DeactivatingPrx> create(const Ice::Current& current) override
    {
        auto communicator = current.adapter->getCommunicator();
        // A thread pool of its own: waitDeactivated waits in a dispatch of
        // the server thread pool for its connections to close.
        communicator->getProperties()->setProperty("Own.ThreadPool.Size", "1");
        _own = communicator->createObjectAdapterWithEndpoints("Own", "tcp -h 127.0.0.1 -p 0");
        auto prx = _own->add(make_shared<DeactivatingI>(), Ice::stringToIdentity("own"));
        _own->activate();
        return Ice::uncheckedCast<DeactivatingPrx>(prx);
    }
    bool waitDeactivated(const Ice::Current&) override
    {
        _own->waitForDeactivate();
        _own->destroy();
        _own = nullptr;
        return true;
    }

private:
    shared_ptr<Ice::ObjectAdapter> _own;
};

template<class T> string nullState(const Ice::optional<T>& v) { return !v ? "unset" : (*v ? "set" : "null"); }

class OptionalNullsI : public OptionalNulls
{
public:
    string describe(Ice::optional<shared_ptr<Base>> b, Ice::optional<shared_ptr<OperationsPrx>> p,
                    const Ice::Current&) override
    {
        return nullState(b) + ":" + nullState(p);
    }
    void make(string state, Ice::optional<shared_ptr<Base>>& b, Ice::optional<shared_ptr<OperationsPrx>>& p,
              const Ice::Current& current) override
    {
        if(state == "null")
        {
            b = shared_ptr<Base>();
            p = shared_ptr<OperationsPrx>();
        }
        else if(state == "set")
        {
            b = make_shared<Base>("s");
            p = Ice::uncheckedCast<OperationsPrx>(current.adapter->createProxy(Ice::stringToIdentity("ops")));
        }
    }
};

class InfoI : public Info
{
public:
    string endpointInfo(const Ice::Current& current) override
    {
        auto info = dynamic_pointer_cast<Ice::IPEndpointInfo>(current.con->getEndpoint()->getInfo());
        if(!info)
        {
            return "not an IP endpoint";
        }
        string kind = info->type() == Ice::TCPEndpointType ? "tcp" : to_string(info->type());
        return kind + ":" + info->host + ":" + to_string(info->port) + ":" + to_string(info->timeout) + ":" +
               (info->compress ? "true" : "false");
    }
};

struct Served
{
    shared_ptr<Ice::Communicator> communicator;
    int port;
    int facetsPort;
};

int portOf(const shared_ptr<Ice::ObjectAdapter>& adapter)
{
    return dynamic_pointer_cast<Ice::TCPEndpointInfo>(adapter->getEndpoints()[0]->getInfo())->port;
}

Served serve(bool cycles)
{
    Ice::InitializationData data;
    data.properties = Ice::createProperties();
    if(cycles)
    {
        data.properties->setProperty("Ice.AcceptClassCycles", "1");
    }
    auto communicator = Ice::initialize(data);
    communicator->getValueFactoryManager()->add([](const string&) { return make_shared<HookedI>(); },
                                                Hooked::ice_staticId());
    auto adapter = communicator->createObjectAdapterWithEndpoints("Conf", "tcp -h 127.0.0.1 -p 0");
    adapter->add(make_shared<OperationsI>(), Ice::stringToIdentity("ops"));
    adapter->add(make_shared<OptionalsI>(), Ice::stringToIdentity("opt"));
    adapter->add(make_shared<ObjectsI>(), Ice::stringToIdentity("obj"));
    adapter->add(make_shared<ExceptionsI>(), Ice::stringToIdentity("exc"));
    adapter->add(make_shared<SlicedExceptionsI>(), Ice::stringToIdentity("sexc"));
    adapter->add(make_shared<SlicedObjectsI>(), Ice::stringToIdentity("sobj"));
    adapter->add(make_shared<CompactObjectsI>(), Ice::stringToIdentity("cobj"));
    adapter->add(make_shared<RelayingI>(), Ice::stringToIdentity("relaying"));
    adapter->add(make_shared<ValuesI>(), Ice::stringToIdentity("vf"));
    adapter->add(make_shared<LoudGreeterI>(), Ice::stringToIdentity("cls"));
    adapter->add(make_shared<ObservedI>(), Ice::stringToIdentity("obs"));
    adapter->add(make_shared<DeactivationI>(), Ice::stringToIdentity("deact"));
    adapter->add(make_shared<OptionalNullsI>(), Ice::stringToIdentity("optn"));
    adapter->add(make_shared<InfoI>(), Ice::stringToIdentity("info"));
    auto state = make_shared<LocatorState>();
    auto locator = make_shared<LocatorI>(make_shared<LocatedI>(state), state);
    adapter->addServantLocator(locator, "loc");
    adapter->addServantLocator(locator, "");
    adapter->activate();
    auto facets = communicator->createObjectAdapterWithEndpoints("Facets", "tcp -h 127.0.0.1 -p 0");
    auto fct = Ice::stringToIdentity("fct");
    facets->add(make_shared<FacetedI>("fct"), fct);
    facets->addFacet(make_shared<FacetedI>("fct-b"), fct, "b");
    facets->addDefaultServant(make_shared<FacetedI>("dflt"), "dflt");
    facets->addDefaultServant(make_shared<FacetedI>("any"), "");
    facets->activate();
    return Served{communicator, portOf(adapter), portOf(facets)};
}

}

int main()
{
    try
    {
        auto plain = serve(false);
        auto cycles = serve(true);
        cout << "READY " << plain.port << " " << cycles.port << " " << plain.facetsPort << endl;
        string line;
        while(getline(cin, line))
        {
        }
        plain.communicator->destroy();
        cycles.communicator->destroy();
    }
    catch(const std::exception& e)
    {
        cerr << "server: " << e.what() << endl;
        return 1;
    }
    return 0;
}
