#!/usr/bin/python3
"""TopicManager/Topic calls through encoding-1.0 proxies; prints what the
client decoded (compared between floe-storm and a real IceStorm).

usage: enc10.py TM_PORT
"""
import sys

import Ice
import IceStorm


def main():
    port = int(sys.argv[1])
    with Ice.initialize() as ic:
        tm = IceStorm.TopicManagerPrx.uncheckedCast(
            ic.stringToProxy("IceStorm/TopicManager -e 1.0:tcp -h 127.0.0.1 -p %d" % port))
        out = []
        t = tm.create("e10")
        out.append("create " + str(t))
        try:
            tm.create("e10")
        except IceStorm.TopicExists as e:
            out.append("exists " + e.name)
        try:
            tm.retrieve("none")
        except IceStorm.NoSuchTopic as e:
            out.append("nosuch " + e.name)
        out.append("all " + str(sorted(tm.retrieveAll().keys())))
        t = IceStorm.TopicPrx.uncheckedCast(t.ice_encodingVersion(Ice.Encoding_1_0))
        out.append("name " + t.getName())
        out.append("publisher " + str(t.getPublisher()))
        sub = ic.stringToProxy("s1 -o -e 1.0:tcp -h 127.0.0.1 -p 1")
        out.append("subscribe " + str(t.subscribeAndGetPublisher({}, sub)))
        try:
            t.subscribeAndGetPublisher({}, sub)
        except IceStorm.AlreadySubscribed:
            out.append("already")
        try:
            t.subscribeAndGetPublisher({"reliability": "x"}, ic.stringToProxy("s2:tcp -h 127.0.0.1 -p 1"))
        except IceStorm.BadQoS as e:
            out.append("badqos " + e.reason)
        out.append("subs " + str([Ice.identityToString(i) for i in t.getSubscribers()]))
        t2 = tm.create("e10b")
        t.link(t2, 3)
        out.append("links " + str([(str(l.theTopic), l.name, l.cost) for l in t.getLinkInfoSeq()]))
        try:
            t.link(t2, 3)
        except IceStorm.LinkExists as e:
            out.append("linkexists " + e.name)
        t.destroy()
        t2.destroy()
        for line in out:
            print(line.replace(":%d" % port, ":PORT").replace("-p %d" % port, "-p PORT"))


if __name__ == "__main__":
    main()
