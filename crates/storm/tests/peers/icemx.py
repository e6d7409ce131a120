#!/usr/bin/python3
"""Reads a broker's IceMX Topic and Subscriber maps with Ice 3.7 for Python.

usage:
  icemx.py ADMIN_PROXY FACET VIEW
      IceMX::MetricsAdmin on facet FACET of the admin object ADMIN_PROXY
      (floe-storm: "Metrics"; IceStorm in IceBox:
      "IceBox.Service.IceStorm.Metrics"); getMetricsView(VIEW). Prints the
      map names ("maps Connection,...,Topic") then one line per entry of
      the Topic and Subscriber maps:
        Topic id=T class=::IceMX::TopicMetrics total=N current=N published=N forwarded=N
        Subscriber id=S class=... total=N current=N queued=N outstanding=N delivered=N
      Values with spaces (subscriber proxies) are quoted with [].
"""
import sys

import Ice
import IceMX
import IceStorm  # registers IceMX::TopicMetrics and IceMX::SubscriberMetrics


def main():
    admin, facet, view = sys.argv[1:4]
    ic = Ice.initialize()
    try:
        mx = IceMX.MetricsAdminPrx.checkedCast(ic.stringToProxy(admin), facet)
        if mx is None:
            print("no MetricsAdmin on facet %s" % facet, flush=True)
            return 1
        maps, _ = mx.getMetricsView(view)
        print("maps " + ",".join(sorted(maps.keys())), flush=True)
        for m in maps.get("Topic", []):
            print("Topic id=[%s] class=%s total=%d current=%d published=%d forwarded=%d"
                  % (m.id, m.ice_id(), m.total, m.current, m.published, m.forwarded),
                  flush=True)
        for m in maps.get("Subscriber", []):
            print("Subscriber id=[%s] class=%s total=%d current=%d queued=%d "
                  "outstanding=%d delivered=%d"
                  % (m.id, m.ice_id(), m.total, m.current, m.queued, m.outstanding,
                     m.delivered), flush=True)
        return 0
    finally:
        ic.destroy()


if __name__ == "__main__":
    sys.exit(main())
