# The hello server in Python (Ice 3.7): the floe client talks to it.
#   python3 examples/hello/python/server.py [--Hello.Endpoints="tcp -h 127.0.0.1 -p 10000"]
import os
import sys
import time

import Ice

# HELLO_SLICE names another Slice file for Demo::Hello (hello_derive's export).
Ice.loadSlice(os.environ.get("HELLO_SLICE") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "slice", "Hello.ice"))
import Demo  # noqa: E402


class HelloI(Demo.Hello):
    def sayHello(self, delay, current):
        if delay > 0:
            time.sleep(delay / 1000.0)
        print("Hello World!", flush=True)

    def shutdown(self, current):
        print("Shutting down...", flush=True)
        current.adapter.getCommunicator().shutdown()


with Ice.initialize(sys.argv) as communicator:
    # --Hello.* options set properties too, as floe's Communicator::from_args does.
    communicator.getProperties().parseCommandLineOptions("Hello", sys.argv)
    props = communicator.getProperties()
    if not props.getProperty("Hello.Endpoints"):
        props.setProperty("Hello.Endpoints", "tcp -h 127.0.0.1 -p 10000")
    adapter = communicator.createObjectAdapter("Hello")
    adapter.add(HelloI(), Ice.stringToIdentity("hello"))
    adapter.activate()
    print("listening on", adapter.getEndpoints()[0], flush=True)
    communicator.waitForShutdown()
