# A Python Ice 3.7 peer for the class-graph memory budget tests
# (tests/class_budget.rs), with slice/ClassGraph.ice.
#
# Usage: class_graph_peer.py <ClassGraph.ice> client <port>
#   calls a floe Graph::Sink and prints one line per call, "name: outcome";
# or:    class_graph_peer.py <ClassGraph.ice> server
#   serves Graph::Sink, prints its port, serves until stdin closes.
import sys

import Ice

Ice.loadSlice(sys.argv[1])
import Graph  # noqa: E402


def outcome(call):
    try:
        return "returned %r" % (call(),)
    except Ice.UnknownLocalException as e:
        return "UnknownLocalException: " + " ".join(e.unknown.split())
    except Ice.Exception as e:
        return type(e).__name__


def client(port):
    with Ice.initialize(sys.argv[:1]) as communicator:
        sink = Graph.SinkPrx.uncheckedCast(
            communicator.stringToProxy("sink:tcp -h 127.0.0.1 -p %s -t 20000" % port))
        print("countEmpty(5000): " + outcome(lambda: sink.countEmpty([Graph.Empty() for _ in range(5000)])))
        print("countEmpty(300000): " + outcome(lambda: sink.countEmpty([Graph.Empty() for _ in range(300000)])))
        print("count(100000): " + outcome(lambda: sink.count([Graph.Item(i) for i in range(100000)])))
        print("ping: " + outcome(sink.ice_ping))
        print("done", flush=True)


class SinkI(Graph.Sink):
    def count(self, items, current):
        return sum(1 for i in items if i is not None)

    def countEmpty(self, items, current):
        return sum(1 for i in items if i is not None)

    def put(self, n, current):
        return n

    def make(self, n, current):
        return [Graph.Item(i) for i in range(n)]

    def makeEmpty(self, n, current):
        return [Graph.Empty() for _ in range(n)]


def server():
    with Ice.initialize(sys.argv[:1]) as communicator:
        adapter = communicator.createObjectAdapterWithEndpoints("Graph", "tcp -h 127.0.0.1 -p 0")
        adapter.add(SinkI(), Ice.stringToIdentity("sink"))
        adapter.activate()
        print(adapter.getEndpoints()[0].getInfo().port, flush=True)
        sys.stdin.read()


if sys.argv[2] == "client":
    client(sys.argv[3])
else:
    server()
