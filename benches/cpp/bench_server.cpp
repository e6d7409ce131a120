// Ice C++11 bench server for Bench.ice, same CLI as floe's bench_server:
//   bench_server PORT [--Ice.Prop=value...]
// Serves a (Latency), t (Throughput), m (Messages) on tcp -h 127.0.0.1 -p PORT,
// or on the endpoints of --Bench.Endpoints='ssl -h 127.0.0.1 -p P' when given
// (ssl and wss with --Ice.Plugin.IceSSL=IceSSL:createIceSSL and --IceSSL.*;
// Ice loads libIceSSL++11 itself), prints "Bench ready", exits on
// Throughput::shutdown or SIGINT/SIGTERM.
#include <Ice/Ice.h>
#include <Bench.h>
#include <iostream>

using namespace std;

class LatencyI : public Bench::Latency {
public:
    void o(const Ice::Current&) override {}
};

class ThroughputI : public Bench::Throughput {
public:
    void sendByteSeq(pair<const Ice::Byte*, const Ice::Byte*>, const Ice::Current&) override {}
    Bench::ByteSeq recvByteSeq(int size, const Ice::Current&) override {
        if (static_cast<int>(bytes_.size()) != size) {
            bytes_.resize(size);
            for (int i = 0; i < size; ++i) bytes_[i] = static_cast<Ice::Byte>(i);
        }
        return bytes_;
    }
    void sendFixedSeq(Bench::FixedSeq, const Ice::Current&) override {}
    Bench::FixedSeq recvFixedSeq(int count, const Ice::Current&) override {
        if (static_cast<int>(fixed_.size()) != count) {
            fixed_.resize(count);
            for (int i = 0; i < count; ++i) fixed_[i] = Bench::Fixed{i, 2 * i, i * 0.5};
        }
        return fixed_;
    }
    void sendStringDoubleSeq(Bench::StringDoubleSeq, const Ice::Current&) override {}
    Bench::StringDoubleSeq recvStringDoubleSeq(int count, const Ice::Current&) override {
        if (static_cast<int>(strdbl_.size()) != count) {
            strdbl_.assign(count, Bench::StringDouble{"hello", 3.14});
        }
        return strdbl_;
    }
    void shutdown(const Ice::Current& c) override { c.adapter->getCommunicator()->shutdown(); }

private:
    Bench::ByteSeq bytes_;
    Bench::FixedSeq fixed_;
    Bench::StringDoubleSeq strdbl_;
};

class MessagesI : public Bench::Messages {
public:
    void publishBytesOneWay(Bench::ByteSeq, const Ice::Current&) override {}
    int publishBytesTwoWay(Bench::ByteSeq m, const Ice::Current&) override { return static_cast<int>(m.size()); }
    void publishFloatsOneWay(Bench::FloatSeq, const Ice::Current&) override {}
    int publishFloatsTwoWay(Bench::FloatSeq m, const Ice::Current&) override { return static_cast<int>(m.size()); }
    void publishDataOneWay(Bench::DataMessage, const Ice::Current&) override {}
    int publishDataTwoWay(Bench::DataMessage m, const Ice::Current&) override { return static_cast<int>(m.signals.size()); }
};

int main(int argc, char* argv[]) {
    try {
        Ice::CtrlCHandler ctrlC;
        Ice::InitializationData init;
        init.properties = Ice::createProperties(argc, argv);
        if (init.properties->getProperty("Ice.MessageSizeMax").empty()) {
            init.properties->setProperty("Ice.MessageSizeMax", "102400");
        }
        auto args = init.properties->parseCommandLineOptions("", Ice::argsToStringSeq(argc, argv));
        if (args.size() < 2) {
            cerr << "usage: bench_server PORT" << endl;
            return 2;
        }
        Ice::CommunicatorHolder ich(init);
        auto communicator = ich.communicator();
        ctrlC.setCallback([communicator](int) { communicator->shutdown(); });
        auto endpoints = init.properties->getPropertyWithDefault("Bench.Endpoints", "tcp -h 127.0.0.1 -p " + args[1]);
        auto adapter = communicator->createObjectAdapterWithEndpoints("Bench", endpoints);
        adapter->add(make_shared<LatencyI>(), Ice::stringToIdentity("a"));
        adapter->add(make_shared<ThroughputI>(), Ice::stringToIdentity("t"));
        adapter->add(make_shared<MessagesI>(), Ice::stringToIdentity("m"));
        adapter->activate();
        cout << "Bench ready" << endl;
        communicator->waitForShutdown();
    } catch (const std::exception& e) {
        cerr << "bench_server: " << e.what() << endl;
        return 1;
    }
    return 0;
}
