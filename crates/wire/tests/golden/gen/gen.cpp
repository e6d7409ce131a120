// Writes every golden vector with Ice's own Ice::OutputStream (C++11 mapping)
// and prints one `name hex` line each (`-` for no bytes). With arguments,
// prints only the vectors named; with --decode, decodes stdin instead (see
// decodeLines). Built and run by gen.sh and by the live test.

#include <Ice/Ice.h>
#include <Golden.h>

#include <cfloat>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <set>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace Golden;

namespace
{

std::shared_ptr<Ice::Communicator> communicator;
std::set<std::string> wanted;

void emit(const std::string& name, const std::function<void(Ice::OutputStream&)>& write)
{
    if(!wanted.empty() && wanted.find(name) == wanted.end())
    {
        return;
    }
    Ice::OutputStream out(communicator);
    write(out);
    auto bytes = out.finished();
    std::printf("%s ", name.c_str());
    if(bytes.first == bytes.second)
    {
        std::printf("-");
    }
    for(auto p = bytes.first; p != bytes.second; ++p)
    {
        std::printf("%02x", static_cast<unsigned>(*p));
    }
    std::printf("\n");
}

// Optional values need an open encapsulation (as in a parameter list): the
// opt_* vectors are whole 1.1 encapsulations.
void emitEncapsulated(const std::string& name, const std::function<void(Ice::OutputStream&)>& write)
{
    emit(name, [&](Ice::OutputStream& out) {
        out.startEncapsulation(Ice::Encoding_1_1, Ice::FormatType::DefaultFormat);
        write(out);
        out.endEncapsulation();
    });
}

template<typename T> void value(const std::string& name, const T& v)
{
    emit(name, [&](Ice::OutputStream& out) { out.write(v); });
}

template<typename T> Ice::optional<T> some(const T& v)
{
    return Ice::optional<T>(v);
}

// Test values shared by several vectors.
const Point point{1, 2};
const Fixed fixedValue{true, 0x7f, -2, 0x01020304, -1, 1.5f, -2.25};
const Mixed mixed{"ab", 0.5, false};

Nested nested()
{
    return Nested{"nest", Point{-1, 7}, Mixed{"m", 1.0, true}, ColorSeq{Color::Blue, Color::Red},
                  StringIntDict{{"a", 1}, {"b", 2}}};
}

std::string repeat(const std::string& s, int n)
{
    std::string r;
    for(int i = 0; i < n; ++i)
    {
        r += s;
    }
    return r;
}

IntSeq iota(int n)
{
    IntSeq v;
    for(int i = 0; i < n; ++i)
    {
        v.push_back(i * 7 - 100);
    }
    return v;
}

ByteSeq byteRamp(int n)
{
    ByteSeq v;
    for(int i = 0; i < n; ++i)
    {
        v.push_back(static_cast<Ice::Byte>(i & 0xff));
    }
    return v;
}

void primitives()
{
    value("bool_false", false);
    value("bool_true", true);
    value("byte_0", Ice::Byte(0));
    value("byte_7f", Ice::Byte(0x7f));
    value("byte_ff", Ice::Byte(0xff));
    value("short_min", std::numeric_limits<Ice::Short>::min());
    value("short_max", std::numeric_limits<Ice::Short>::max());
    value("short_m1", Ice::Short(-1));
    value("int_0", Ice::Int(0));
    value("int_m1", Ice::Int(-1));
    value("int_min", std::numeric_limits<Ice::Int>::min());
    value("int_max", std::numeric_limits<Ice::Int>::max());
    value("int_01020304", Ice::Int(0x01020304));
    value("long_min", std::numeric_limits<Ice::Long>::min());
    value("long_max", std::numeric_limits<Ice::Long>::max());
    value("long_m2", Ice::Long(-2));
    value("float_0", 0.0f);
    value("float_neg_0", -0.0f);
    value("float_1_5", 1.5f);
    value("float_min_positive", FLT_MIN);
    value("float_denormal", std::numeric_limits<float>::denorm_min());
    value("float_max", FLT_MAX);
    value("float_inf", std::numeric_limits<float>::infinity());
    value("float_neg_inf", -std::numeric_limits<float>::infinity());
    value("float_nan", std::numeric_limits<float>::quiet_NaN());
    value("double_0", 0.0);
    value("double_neg_0", -0.0);
    value("double_m2_25", -2.25);
    value("double_min_positive", DBL_MIN);
    value("double_denormal", std::numeric_limits<double>::denorm_min());
    value("double_max", DBL_MAX);
    value("double_inf", std::numeric_limits<double>::infinity());
    value("double_nan", std::numeric_limits<double>::quiet_NaN());
}

void strings()
{
    value("string_empty", std::string());
    value("string_hi", std::string("hi"));
    value("string_utf8", std::string(u8"h\u00e9\u20ac\U0001D11E"));
    value("string_254", repeat("a", 254));
    value("string_255", repeat("b", 255));
    value("string_300_utf8", repeat(u8"\u00e9", 150));
    value("string_nul", std::string("a\0b", 3));
}

void sizes()
{
    const std::vector<std::pair<std::string, Ice::Int>> cases = {
        {"size_0", 0}, {"size_1", 1}, {"size_254", 254}, {"size_255", 255}, {"size_256", 256},
        {"size_300", 300}, {"size_65536", 65536}, {"size_max", std::numeric_limits<Ice::Int>::max()}};
    for(const auto& c : cases)
    {
        emit(c.first, [&](Ice::OutputStream& out) { out.writeSize(c.second); });
    }
}

void sequences()
{
    value("seq_bool", BoolSeq{true, false, true});
    value("seq_byte", ByteSeq{0, 1, 0xff});
    value("seq_byte_300", byteRamp(300));
    value("seq_short", ShortSeq{-1, 0x1234, std::numeric_limits<Ice::Short>::min()});
    value("seq_int", IntSeq{1, -1, std::numeric_limits<Ice::Int>::max()});
    value("seq_int_255", iota(255));
    value("seq_long", LongSeq{std::numeric_limits<Ice::Long>::min(), 0, 5});
    value("seq_float", FloatSeq{1.5f, -0.0f, std::numeric_limits<float>::infinity()});
    value("seq_double", DoubleSeq{-2.25, DBL_MAX, 0.1});
    value("seq_string", StringSeq{"a", "", u8"\u00e9", repeat("z", 260)});
    value("seq_point", PointSeq{Point{1, 2}, Point{-3, 4}});
    value("seq_mixed", MixedSeq{Mixed{"s", 1.0, true}, Mixed{"", 0.0, false}});
    value("seq_color", ColorSeq{Color::Red, Color::Blue, Color::Green});
    value("seq_sparse", SparseSeq{Sparse::A, Sparse::C, Sparse::B});
    value("seq_int_seq", IntSeqSeq{IntSeq{1}, IntSeq{}, IntSeq{2, 3}});
    value("seq_empty_int", IntSeq{});
    value("seq_empty_string", StringSeq{});
    value("seq_empty_point", PointSeq{});
    value("seq_empty_bool", BoolSeq{});
}

void dictionaries()
{
    value("dict_string_int", StringIntDict{{"a", 1}, {"b", 2}, {u8"\u00e9t\u00e9", -3}});
    value("dict_int_string", IntStringDict{{5, "five"}, {-1, "minus one"}, {0, ""}});
    value("dict_int_int", IntIntDict{{1, 2}, {3, 4}});
    value("dict_string_point", StringPointDict{{"origin", Point{0, 0}}, {"p", Point{1, 2}}});
    value("dict_int_mixed", IntMixedDict{{1, Mixed{"m", 0.5, true}}, {2, Mixed{"", -1.0, false}}});
    value("dict_empty", StringIntDict{});
}

void enums()
{
    value("enum_red", Color::Red);
    value("enum_green", Color::Green);
    value("enum_blue", Color::Blue);
    value("sparse_a", Sparse::A);
    value("sparse_b", Sparse::B);
    value("sparse_c", Sparse::C);
}

void structs()
{
    value("struct_point", point);
    value("struct_fixed", fixedValue);
    value("struct_line", Line{Point{1, 2}, Point{-3, -4}});
    value("struct_mixed", mixed);
    value("struct_nested", nested());
}

void optionals()
{
    emitEncapsulated("opt_f1", [](Ice::OutputStream& out) {
        out.write(1, some(true));
        out.write(2, some(Ice::Byte(0xab)));
    });
    emitEncapsulated("opt_f2", [](Ice::OutputStream& out) { out.write(3, some(Ice::Short(-2))); });
    emitEncapsulated("opt_f4", [](Ice::OutputStream& out) {
        out.write(4, some(Ice::Int(0x01020304)));
        out.write(5, some(1.5f));
    });
    emitEncapsulated("opt_f8", [](Ice::OutputStream& out) {
        out.write(6, some(Ice::Long(-5)));
        out.write(7, some(-2.25));
    });
    emitEncapsulated("opt_size", [](Ice::OutputStream& out) {
        out.write(8, some(Color::Blue));
        out.write(9, some(Sparse::C));
    });
    emitEncapsulated("opt_vsize_string", [](Ice::OutputStream& out) {
        out.write(10, some(std::string("hello")));
        out.write(11, some(repeat("s", 300)));
    });
    emitEncapsulated("opt_vsize_bytes", [](Ice::OutputStream& out) {
        out.write(12, some(ByteSeq{9, 8, 7}));
        out.write(13, some(BoolSeq{true, false}));
    });
    emitEncapsulated("opt_vsize_struct", [](Ice::OutputStream& out) {
        out.write(14, some(point));
        out.write(15, some(fixedValue));
        out.write(16, some(Line{Point{5, 6}, Point{7, 8}}));
    });
    emitEncapsulated("opt_vsize_seq", [](Ice::OutputStream& out) {
        out.write(17, some(IntSeq{1, 2, 3}));
        out.write(18, some(PointSeq{Point{1, 2}}));
        out.write(19, some(DoubleSeq{0.5}));
        out.write(20, some(iota(300)));
        out.write(21, some(IntIntDict{{1, 2}, {3, 4}}));
        out.write(22, some(ShortSeq{}));
    });
    emitEncapsulated("opt_fsize_struct", [](Ice::OutputStream& out) {
        out.write(23, some(mixed));
        out.write(24, some(nested()));
    });
    emitEncapsulated("opt_fsize_seq", [](Ice::OutputStream& out) {
        out.write(25, some(StringSeq{"a", "bc"}));
        out.write(26, some(MixedSeq{mixed}));
        out.write(27, some(IntSeqSeq{IntSeq{1}, IntSeq{}}));
        out.write(28, some(ColorSeq{Color::Green}));
    });
    emitEncapsulated("opt_fsize_dict", [](Ice::OutputStream& out) {
        out.write(29, some(StringIntDict{{"k", 1}}));
        out.write(30, some(IntStringDict{{1, "v"}}));
        out.write(31, some(StringPointDict{{"p", Point{1, 2}}}));
        out.write(32, some(IntMixedDict{{7, mixed}}));
    });
    emitEncapsulated("opt_tag_high", [](Ice::OutputStream& out) {
        out.write(29, some(Ice::Int(29)));
        out.write(30, some(Ice::Int(30)));
        out.write(40, some(true));
        out.write(254, some(std::string("x")));
        out.write(255, some(Ice::Short(255)));
        out.write(1000, some(Ice::Long(1000)));
    });
    emitEncapsulated("opt_absent", [](Ice::OutputStream& out) {
        out.write(1, Ice::optional<Ice::Int>());
        out.write(2, Ice::optional<std::string>());
        out.write(3, Ice::optional<Mixed>());
    });
    // Every format in one list, for readers that skip what they do not want.
    emitEncapsulated("opt_mixed", [](Ice::OutputStream& out) {
        out.write(Ice::Int(-7));
        out.write(1, some(true));
        out.write(2, some(Ice::Short(2)));
        out.write(3, some(Ice::Int(3)));
        out.write(4, some(4.0));
        out.write(5, some(Color::Green));
        out.write(6, some(std::string("six")));
        out.write(7, some(point));
        out.write(8, some(IntSeq{8, 8}));
        out.write(9, some(mixed));
        out.write(10, some(StringSeq{"ten"}));
        out.write(11, some(StringIntDict{{"eleven", 11}}));
        out.write(40, some(Ice::Int(40)));
    });
}

void encapsulations()
{
    emit("encaps_empty_11", [](Ice::OutputStream& out) { out.writeEmptyEncapsulation(Ice::Encoding_1_1); });
    emit("encaps_empty_10", [](Ice::OutputStream& out) { out.writeEmptyEncapsulation(Ice::Encoding_1_0); });
    emit("encaps_11", [](Ice::OutputStream& out) {
        out.startEncapsulation(Ice::Encoding_1_1, Ice::FormatType::DefaultFormat);
        out.write(Ice::Int(7));
        out.write(std::string("x"));
        out.write(Color::Blue);
        out.write(Sparse::C);
        out.write(1, some(Ice::Int(3)));
        out.endEncapsulation();
    });
    emit("encaps_10", [](Ice::OutputStream& out) {
        out.startEncapsulation(Ice::Encoding_1_0, Ice::FormatType::DefaultFormat);
        out.write(Ice::Int(7));
        out.write(Color::Blue);
        out.write(Sparse::C);
        out.write(ColorSeq{Color::Red, Color::Green});
        out.write(SparseSeq{Sparse::B});
        out.write(1, some(Ice::Int(3))); // encoding 1.0 has no optionals: writes nothing
        out.endEncapsulation();
    });
    emit("encaps_nested", [](Ice::OutputStream& out) {
        out.startEncapsulation(Ice::Encoding_1_1, Ice::FormatType::DefaultFormat);
        out.write(std::string("outer"));
        out.startEncapsulation(Ice::Encoding_1_0, Ice::FormatType::DefaultFormat);
        out.write(Sparse::B);
        out.endEncapsulation();
        out.write(Ice::Int(-1));
        out.endEncapsulation();
    });
}

// --- Classes and user exceptions in encoding 1.0 -------------------------
//
// Encoding 1.0 writes class instances after the data that references them,
// in rounds; within a round Ice orders the instances by their address (its
// map is keyed by the shared_ptr). So that the order is also the order of
// their ids (the order a reader has no reason to prefer, and floe's),
// every instance is allocated from a bump arena, in marshaling order.

alignas(std::max_align_t) unsigned char arenaBytes[1 << 16];
std::size_t arenaUsed = 0;

template<typename T> struct Arena
{
    using value_type = T;
    Arena() = default;
    template<typename U> Arena(const Arena<U>&) {}
    T* allocate(std::size_t n)
    {
        const std::size_t align = alignof(std::max_align_t);
        std::size_t at = (arenaUsed + align - 1) / align * align;
        if(at + n * sizeof(T) > sizeof(arenaBytes))
        {
            throw std::runtime_error("arena exhausted");
        }
        arenaUsed = at + n * sizeof(T);
        return reinterpret_cast<T*>(arenaBytes + at);
    }
    void deallocate(T*, std::size_t) {}
};
template<typename T, typename U> bool operator==(const Arena<T>&, const Arena<U>&) { return true; }
template<typename T, typename U> bool operator!=(const Arena<T>&, const Arena<U>&) { return false; }

// A new instance from the arena: later calls get higher addresses.
template<typename T, typename... A> std::shared_ptr<T> make(A&&... args)
{
    return std::allocate_shared<T>(Arena<T>(), std::forward<A>(args)...);
}

// A whole 1.0 encapsulation: `write`, then the pending instances (as Ice
// does after the parameters of an operation that sends classes).
void emit10(const std::string& name, const std::function<void(Ice::OutputStream&)>& write)
{
    emit(name, [&](Ice::OutputStream& out) {
        out.startEncapsulation(Ice::Encoding_1_0, Ice::FormatType::DefaultFormat);
        write(out);
        out.writePendingValues();
        out.endEncapsulation();
    });
}

// A whole 1.0 encapsulation holding a user exception (a reply with status 1).
void emitException10(const std::string& name, const Ice::UserException& ex)
{
    emit(name, [&](Ice::OutputStream& out) {
        out.startEncapsulation(Ice::Encoding_1_0, Ice::FormatType::DefaultFormat);
        out.writeException(ex);
        out.endEncapsulation();
    });
}

void classes10()
{
    emit10("cls10_null", [](Ice::OutputStream& out) { out.write(std::shared_ptr<Base>()); });
    emit10("cls10_base", [](Ice::OutputStream& out) { out.write(make<Base>(5)); });
    emit10("cls10_derived", [](Ice::OutputStream& out) { out.write(make<Derived>(5, "d")); });
    emit10("cls10_shared", [](Ice::OutputStream& out) {
        // Parameters (pair, b) with pair.x = pair.y = b: ids 1 and 2.
        auto pair = make<Pair>();
        auto b = make<Base>(7);
        pair->x = b;
        pair->y = b;
        out.write(pair);
        out.write(b);
    });
    {
        auto n1 = make<Node>(1, nullptr);
        n1->next = make<Node>(2, n1);
        emit10("cls10_cycle", [&](Ice::OutputStream& out) { out.write(n1); });
        n1->next = nullptr; // break the cycle (after writePendingValues)
    }
    emit10("cls10_bag", [](Ice::OutputStream& out) {
        auto bag = make<Bag>();
        auto b1 = make<Base>(1);
        auto d2 = make<Derived>(2, "x");
        auto b3 = make<Base>(3);
        bag->seq = BaseSeq{b1, d2, nullptr, b1};
        bag->dict = IntBaseDict{{1, b3}, {2, nullptr}};
        out.write(bag);
    });
    // No reference at all, yet the pending values' terminating size.
    emit10("cls10_empty_seq", [](Ice::OutputStream& out) { out.write(BaseSeq()); });
    emit10("cls10_tagged", [](Ice::OutputStream& out) { out.write(make<Tagged>(1, some(Ice::Int(2)))); });
    emit10("cls10_deeper", [](Ice::OutputStream& out) {
        auto deeper = make<Deeper>(1, "s", -1, nullptr);
        deeper->extra = make<Base>(9);
        out.write(deeper);
    });
}

void exceptions10()
{
    emitException10("exc10_base", BaseErr("boom"));
    emitException10("exc10_derived", DerivedErr("deriv", 42, some(Ice::Int(7))));
    emitException10("exc10_deeper", DeeperErr("deriv", 42, Ice::nullopt, "more"));
    {
        auto n1 = make<Node>(1, nullptr);
        n1->next = make<Node>(2, nullptr);
        emitException10("exc10_node", NodeErr(n1));
    }
    emitException10("exc10_node_null", NodeErr(nullptr));
    {
        // The most-derived slice is written first: p gets id 1, n id 2.
        auto p = make<Pair>();
        auto n = make<Node>(3, nullptr);
        p->x = make<Base>(4);
        p->y = make<Derived>(5, "e");
        emitException10("exc10_derived_node", DerivedNodeErr(n, p));
    }
}

// --decode: reads `type hex` lines from stdin, decodes each with Ice's own
// Ice::InputStream, and prints `ok <bytes consumed> <re-encoded hex>` or
// `err <Ice exception id>`: the judge for floe's differential test.

std::vector<Ice::Byte> fromHex(const std::string& hex)
{
    std::vector<Ice::Byte> bytes;
    for(std::string::size_type i = 0; i + 1 < hex.size(); i += 2)
    {
        bytes.push_back(static_cast<Ice::Byte>(std::stoul(hex.substr(i, 2), nullptr, 16)));
    }
    return bytes;
}

template<typename T> void reencode(Ice::InputStream& in, Ice::OutputStream& out)
{
    T v;
    in.read(v);
    out.write(v);
}

template<typename T> void reencodeOptional(Ice::InputStream& in, Ice::OutputStream& out, Ice::Int tag)
{
    Ice::optional<T> v;
    in.read(tag, v);
    out.write(tag, v);
}

void decodeOne(const std::string& type, Ice::InputStream& in, Ice::OutputStream& out)
{
    if(type == "bool") reencode<bool>(in, out);
    else if(type == "short") reencode<Ice::Short>(in, out);
    else if(type == "int") reencode<Ice::Int>(in, out);
    else if(type == "string") reencode<std::string>(in, out);
    else if(type == "Color") reencode<Color>(in, out);
    else if(type == "Sparse") reencode<Sparse>(in, out);
    else if(type == "Point") reencode<Point>(in, out);
    else if(type == "Fixed") reencode<Fixed>(in, out);
    else if(type == "Mixed") reencode<Mixed>(in, out);
    else if(type == "Nested") reencode<Nested>(in, out);
    else if(type == "ByteSeq") reencode<ByteSeq>(in, out);
    else if(type == "BoolSeq") reencode<BoolSeq>(in, out);
    else if(type == "IntSeq") reencode<IntSeq>(in, out);
    else if(type == "StringSeq") reencode<StringSeq>(in, out);
    else if(type == "PointSeq") reencode<PointSeq>(in, out);
    else if(type == "MixedSeq") reencode<MixedSeq>(in, out);
    else if(type == "ColorSeq") reencode<ColorSeq>(in, out);
    else if(type == "SparseSeq") reencode<SparseSeq>(in, out);
    else if(type == "IntSeqSeq") reencode<IntSeqSeq>(in, out);
    else if(type == "StringIntDict") reencode<StringIntDict>(in, out);
    else if(type == "IntStringDict") reencode<IntStringDict>(in, out);
    else if(type == "StringPointDict") reencode<StringPointDict>(in, out);
    else if(type == "IntMixedDict") reencode<IntMixedDict>(in, out);
    else if(type == "OptMixed")
    {
        // The shape of the opt_mixed vector: an encapsulation holding an
        // int and optionals 1-11 and 40.
        in.startEncapsulation();
        out.startEncapsulation(Ice::Encoding_1_1, Ice::FormatType::DefaultFormat);
        reencode<Ice::Int>(in, out);
        reencodeOptional<bool>(in, out, 1);
        reencodeOptional<Ice::Short>(in, out, 2);
        reencodeOptional<Ice::Int>(in, out, 3);
        reencodeOptional<double>(in, out, 4);
        reencodeOptional<Color>(in, out, 5);
        reencodeOptional<std::string>(in, out, 6);
        reencodeOptional<Point>(in, out, 7);
        reencodeOptional<IntSeq>(in, out, 8);
        reencodeOptional<Mixed>(in, out, 9);
        reencodeOptional<StringSeq>(in, out, 10);
        reencodeOptional<StringIntDict>(in, out, 11);
        reencodeOptional<Ice::Int>(in, out, 40);
        in.endEncapsulation();
        out.endEncapsulation();
    }
    else throw std::invalid_argument("unknown type " + type);
}

// Decodes one input in a forked child, so that an input which crashes Ice
// (it happens: see the differential test) is reported, not fatal.
void decodeIsolated(const std::string& type, const std::vector<Ice::Byte>& bytes)
{
    std::fflush(stdout);
    pid_t child = fork();
    if(child == 0)
    {
        struct rlimit noCore = {0, 0};
        setrlimit(RLIMIT_CORE, &noCore); // a crash must not leave a core file behind
        // Ice may try to allocate (and zero) gigabytes for a hostile count:
        // cap the address space so that fails at once with std::bad_alloc.
        struct rlimit oneGiB = {1UL << 30, 1UL << 30};
        setrlimit(RLIMIT_AS, &oneGiB);
        try
        {
            // No communicator: the child must not depend on its threads.
            Ice::InputStream in(bytes);
            Ice::OutputStream out;
            decodeOne(type, in, out);
            auto written = out.finished();
            std::printf("ok %u ", static_cast<unsigned>(in.pos()));
            if(written.first == written.second)
            {
                std::printf("-");
            }
            for(auto p = written.first; p != written.second; ++p)
            {
                std::printf("%02x", static_cast<unsigned>(*p));
            }
            std::printf("\n");
        }
        catch(const Ice::Exception& ex)
        {
            std::printf("err %s\n", ex.ice_id().c_str());
        }
        catch(const std::invalid_argument& ex)
        {
            std::printf("fatal %s\n", ex.what());
        }
        catch(const std::exception&)
        {
            std::printf("err std::exception\n");
        }
        std::fflush(stdout);
        _exit(0);
    }
    int status = 0;
    if(child < 0 || waitpid(child, &status, 0) != child)
    {
        std::printf("fatal fork failed\n");
    }
    else if(WIFSIGNALED(status))
    {
        std::printf("crash signal %d\n", WTERMSIG(status));
    }
}

void decodeLines()
{
    std::string line;
    while(std::getline(std::cin, line))
    {
        auto space = line.find(' ');
        if(space == std::string::npos)
        {
            continue;
        }
        std::string hex = line.substr(space + 1);
        decodeIsolated(line.substr(0, space), fromHex(hex == "-" ? std::string() : hex));
    }
    std::fflush(stdout);
}

}

int main(int argc, char* argv[])
{
    try
    {
        if(argc > 1 && std::string(argv[1]) == "--decode")
        {
            // No communicator (and so no threads) in a process forked per input.
            decodeLines();
            return 0;
        }
        Ice::CommunicatorHolder holder(argc, argv);
        communicator = holder.communicator();
        for(int i = 1; i < argc; ++i)
        {
            wanted.insert(argv[i]);
        }
        primitives();
        strings();
        sizes();
        sequences();
        dictionaries();
        enums();
        structs();
        optionals();
        encapsulations();
        classes10();
        exceptions10();
        communicator = nullptr;
    }
    catch(const std::exception& ex)
    {
        std::fprintf(stderr, "gen: %s\n", ex.what());
        return 1;
    }
    return 0;
}
