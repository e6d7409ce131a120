# Bench.ice between Ice 3.8 (or 3.7) for Python and another peer: the
# checks both sides of tests/ice38.rs agree on.
#
#   bench.py server [--Ice.X=v ...]      prints "READY <port>"; serves
#       "latency", "throughput" and "messages" until stdin closes
#   bench.py client <port> [--Ice.X=v ...]
#       runs every check against that port; prints "PASS name" /
#       "FAIL name: detail", then "SUMMARY"
#
# The data: byte i is i % 256; Fixed i is {i, -i, i * 0.5}; StringDouble i
# is {str(i), i * 0.25}; float i is i * 0.5. A server checks what it is
# sent and raises if it differs; publish*TwoWay returns the element count
# (a DataMessage's sampleCount * signalCount).
import os
import sys

import Ice

HERE = os.path.dirname(os.path.abspath(__file__))
SLICE = os.path.join(HERE, "..", "..", "..", "..", "benches", "Bench.ice")
# Ice 3.8 takes a list of arguments, Ice 3.7 a string.
Ice.loadSlice([SLICE] if Ice.intVersion() >= 30800 else SLICE)
import Bench  # noqa: E402

MB = 1000 * 1000


def byte_data(n):
    return bytes(i % 256 for i in range(n))


def fixed_data(n):
    return [Bench.Fixed(i, -i, i * 0.5) for i in range(n)]


def sd_data(n):
    return [Bench.StringDouble(str(i), i * 0.25) for i in range(n)]


def float_data(n):
    return [i * 0.5 for i in range(n)]


def data_message(signals, samples):
    return Bench.DataMessage(
        "msg",
        7,
        signals,
        samples,
        float_data(samples),
        [Bench.SignalData("s%d" % k, float_data(samples)) for k in range(signals)],
    )


def same_fixed(a, b):
    return len(a) == len(b) and all(x.i == y.i and x.j == y.j and x.d == y.d for x, y in zip(a, b))


def same_sd(a, b):
    return len(a) == len(b) and all(x.s == y.s and x.d == y.d for x, y in zip(a, b))


def check(cond, what):
    if not cond:
        raise Ice.UnknownException("bad " + what)


class LatencyI(Bench.Latency):
    def o(self, current):
        pass


class ThroughputI(Bench.Throughput):
    def sendByteSeq(self, seq, current):
        check(bytes(seq) == byte_data(len(seq)), "byte sequence")

    def recvByteSeq(self, size, current):
        return byte_data(size)

    def sendFixedSeq(self, seq, current):
        check(same_fixed(seq, fixed_data(len(seq))), "Fixed sequence")

    def recvFixedSeq(self, count, current):
        return fixed_data(count)

    def sendStringDoubleSeq(self, seq, current):
        check(same_sd(seq, sd_data(len(seq))), "StringDouble sequence")

    def recvStringDoubleSeq(self, count, current):
        return sd_data(count)

    def shutdown(self, current):
        pass


class MessagesI(Bench.Messages):
    def publishBytesOneWay(self, message, current):
        pass

    def publishBytesTwoWay(self, message, current):
        check(bytes(message) == byte_data(len(message)), "bytes message")
        return len(message)

    def publishFloatsOneWay(self, message, current):
        pass

    def publishFloatsTwoWay(self, message, current):
        check(list(message) == float_data(len(message)), "floats message")
        return len(message)

    def publishDataOneWay(self, message, current):
        pass

    def publishDataTwoWay(self, message, current):
        check(list(message.times) == float_data(message.sampleCount), "times")
        check(len(message.signals) == message.signalCount, "signal count")
        for s in message.signals:
            check(list(s.samples) == float_data(message.sampleCount), "samples")
        return message.signalCount * message.sampleCount


def server(args):
    communicator = Ice.initialize(args)
    adapter = communicator.createObjectAdapterWithEndpoints("Bench", "tcp -h 127.0.0.1 -p 0")
    adapter.add(LatencyI(), Ice.stringToIdentity("latency"))
    adapter.add(ThroughputI(), Ice.stringToIdentity("throughput"))
    adapter.add(MessagesI(), Ice.stringToIdentity("messages"))
    adapter.activate()
    print("READY %d" % adapter.getEndpoints()[0].getInfo().port, flush=True)
    sys.stdin.read()
    communicator.destroy()


def client(port, args):
    communicator = Ice.initialize(args)
    try:
        def prx(name, cls):
            base = communicator.stringToProxy("%s:tcp -h 127.0.0.1 -p %d" % (name, port))
            return cls.uncheckedCast(base)

        latency = prx("latency", Bench.LatencyPrx)
        throughput = prx("throughput", Bench.ThroughputPrx)
        messages = prx("messages", Bench.MessagesPrx)
        encoding_1_0 = Bench.ThroughputPrx.uncheckedCast(throughput.ice_encodingVersion(Ice.Encoding_1_0))
        compressed = Bench.ThroughputPrx.uncheckedCast(throughput.ice_compress(True))
        checks = [
            ("ping", lambda: latency.ice_ping()),
            ("is_a", lambda: latency.ice_isA("::Bench::Latency") or fail("not a Latency")),
            ("checked_cast", lambda: Bench.ThroughputPrx.checkedCast(throughput) or fail("null")),
            ("latency", lambda: latency.o()),
            ("oneway", lambda: Bench.LatencyPrx.uncheckedCast(latency.ice_oneway()).o()),
            ("send_bytes_0", lambda: throughput.sendByteSeq(b"")),
            ("send_bytes_1k", lambda: throughput.sendByteSeq(byte_data(1000))),
            ("send_bytes_1m", lambda: throughput.sendByteSeq(byte_data(MB))),
            ("recv_bytes_0", lambda: expect(bytes(throughput.recvByteSeq(0)) == b"")),
            ("recv_bytes_1k", lambda: expect(bytes(throughput.recvByteSeq(1000)) == byte_data(1000))),
            ("recv_bytes_1m", lambda: expect(bytes(throughput.recvByteSeq(MB)) == byte_data(MB))),
            ("send_fixed", lambda: throughput.sendFixedSeq(fixed_data(1000))),
            ("recv_fixed", lambda: expect(same_fixed(throughput.recvFixedSeq(1000), fixed_data(1000)))),
            ("send_string_double", lambda: throughput.sendStringDoubleSeq(sd_data(1000))),
            ("recv_string_double", lambda: expect(same_sd(throughput.recvStringDoubleSeq(1000), sd_data(1000)))),
            ("encoding_1_0", lambda: expect(same_fixed(encoding_1_0.recvFixedSeq(100), fixed_data(100)))),
            ("compressed", lambda: compressed.sendByteSeq(byte_data(100000))),
            ("publish_bytes", lambda: expect(messages.publishBytesTwoWay(byte_data(10000)) == 10000)),
            ("publish_floats", lambda: expect(messages.publishFloatsTwoWay(float_data(2500)) == 2500)),
            ("publish_data", lambda: expect(messages.publishDataTwoWay(data_message(4, 100)) == 400)),
            ("publish_oneways", lambda: publish_oneways(messages)),
            ("not_exist", lambda: expect_raise(lambda: prx("nobody", Bench.LatencyPrx).o(), Ice.ObjectNotExistException)),
            ("bad_data", lambda: expect_raise(lambda: throughput.sendFixedSeq([Bench.Fixed(1, 1, 1.0)]), Ice.UnknownException)),
            ("twoway_after_failures", lambda: latency.o()),
        ]
        for name, run in checks:
            try:
                run()
                print("PASS %s" % name, flush=True)
            except Exception as ex:
                print("FAIL %s: %r" % (name, ex), flush=True)
    finally:
        communicator.destroy()
    print("SUMMARY", flush=True)


def fail(what):
    raise AssertionError(what)


def expect(cond):
    if not cond:
        fail("wrong value")


def expect_raise(call, exception):
    try:
        call()
    except exception:
        return
    fail("no %s" % exception.__name__)


def publish_oneways(messages):
    oneway = Bench.MessagesPrx.uncheckedCast(messages.ice_oneway())
    oneway.publishBytesOneWay(byte_data(1000))
    oneway.publishFloatsOneWay(float_data(100))
    oneway.publishDataOneWay(data_message(2, 10))
    expect(messages.publishBytesTwoWay(byte_data(10)) == 10)


def main():
    if sys.argv[1] == "server":
        server(sys.argv[2:])
    elif sys.argv[1] == "client":
        client(int(sys.argv[2]), sys.argv[3:])
    else:
        sys.exit("unknown mode %s" % sys.argv[1])


main()
