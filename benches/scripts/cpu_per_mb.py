#!/usr/bin/env python3
"""CPU per MB delivered, by process, for the fan-in (4 publishers -> 1
subscriber) through floe-storm (single or x3) or IceStorm x3.

usage: cpu_per_mb.py BROKER CLIENT WORKLOAD EVENTS RUNS [STORM_BIN]
  BROKER: floe1 | floe3 | ice1 | ice3
  CLIENT: path of fanin_client (Ice C++ or floe)

Each broker process's utime+stime (/proc/PID/stat) is read before and
after each client run; the client's threads are sampled every 10 ms
(/proc/PID/task/*/stat, by thread name) and its total comes from wait4.
Prints one JSON line per run and a summary in ms of CPU per MB (10^6
payload bytes received).
"""
import json, os, socket, subprocess, sys, tempfile, time, shutil

TCK = os.sysconf("SC_CLK_TCK")
MSM = "Ice.MessageSizeMax=102400"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def cpu(pid, tid=None):
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    with open(path) as f:
        s = f.read()
    rest = s[s.rindex(")") + 2:].split()
    return (int(rest[11]) + int(rest[12])) / TCK


def wait_port(port, t=60):
    end = time.time() + t
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"port {port} not listening")


def endpoints(ports):
    return ":".join(f"tcp -h 127.0.0.1 -p {p}" for p in ports)


def start(kind, storm, d):
    procs = []
    n = 3 if kind.endswith("3") else 1
    ports = [(free_port(), free_port(), free_port()) for _ in range(n)]
    tm = [p[0] for p in ports]
    pub = [p[1] for p in ports]
    for i in range(1, n + 1):
        t, p, nd = ports[i - 1]
        props = [
            f"IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {t}",
            f"IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {p}",
            MSM,
        ]
        if n > 1:
            props += [
                f"IceStorm.NodeId={i}",
                f"IceStorm.Node.Endpoints=tcp -h 127.0.0.1 -p {nd}",
                f"IceStorm.ReplicatedTopicManagerEndpoints={endpoints(tm)}",
                f"IceStorm.ReplicatedPublishEndpoints={endpoints(pub)}",
            ] + [
                f"IceStorm.Nodes.{j+1}=IceStorm/node{j+1}:tcp -h 127.0.0.1 -p {ports[j][2]}"
                for j in range(n)
            ]
        data = os.path.join(d, f"db{i}")
        os.makedirs(data)
        log = open(os.path.join(d, f"broker{i}.log"), "w")
        if kind.startswith("floe"):
            vg = os.environ.get("CPUMB_VALGRIND_NODE")
            pre = ["valgrind", "--tool=callgrind", f"--callgrind-out-file=/tmp/stormcpu/cg.{kind}.{i}.{os.path.basename(storm)}.out"] if vg and int(vg) == i else []
            cmd = pre + [storm] + [f"--{x}" for x in props] + ["--data-dir", data] + os.environ.get("CPUMB_EXTRA", "").split()
        else:
            cfg = os.path.join(d, f"config{i}.service")
            with open(cfg, "w") as f:
                f.write("\n".join(props) + f"\nIceStorm.InstanceName=IceStorm\nIceStorm.LMDB.Path={data}\n")
            cmd = ["icebox", f"--IceBox.Service.IceStorm=IceStormService,37:createIceStorm --Ice.Config={cfg}", f"--{MSM}"]
        procs.append(subprocess.Popen(cmd, stdout=log, stderr=log))
    for t in tm:
        wait_port(t)
    proxy = f"IceStorm/TopicManager:{endpoints(tm)}"
    if kind == "ice3":
        end = time.time() + 120
        while subprocess.run(["icestormadmin", f"--IceStormAdmin.TopicManager.Default={proxy}",
                              "--Ice.Default.InvocationTimeout=3000", "-e", "topics"],
                             capture_output=True).returncode != 0:
            if time.time() > end:
                raise RuntimeError("icestorm x3 not ready")
            time.sleep(0.5)
    else:
        time.sleep(3 if n > 1 else 0.3)
    return procs, proxy


def classify(name):
    # A thread that read more than it wrote is the subscriber's.
    return name


def run_client(client, proxy, workload, events, broker_pids):
    b0 = [cpu(p) for p in broker_pids]
    perfs = []
    if os.environ.get("CPUMB_PERF"):
        for i, p in enumerate(broker_pids):
            perfs.append(subprocess.Popen(["perf", "stat", "-x,", "-o", f"/tmp/stormcpu/perf{i}.txt",
                "-e", "raw_syscalls:sys_enter,context-switches,task-clock,page-faults,syscalls:sys_enter_brk,syscalls:sys_enter_madvise,syscalls:sys_enter_munmap,syscalls:sys_enter_mmap", "-p", str(p)]))
        time.sleep(0.3)
    if os.environ.get("CPUMB_RECORD"):
        perfs.append(subprocess.Popen(["perf", "record", "-q", "-F", "4000", "--call-graph", "dwarf,16384", "-o",
            os.environ["CPUMB_RECORD"], "-p", ",".join(map(str, broker_pids))], stderr=subprocess.DEVNULL))
        time.sleep(0.5)
    env = dict(os.environ, FANIN_EVENTS=str(events))
    c = subprocess.Popen([client, proxy, "cpu", workload], stdout=subprocess.PIPE, env=env)
    threads = {}
    status = None
    while status is None:
        try:
            for tid in os.listdir(f"/proc/{c.pid}/task"):
                try:
                    with open(f"/proc/{c.pid}/task/{tid}/syscall") as f:
                        nr = f.read().split(" ", 1)[0]
                    sends, recvs, _, hist = threads.get(tid, (0, 0, 0, None))
                    hist = hist or {}
                    hist[nr] = hist.get(nr, 0) + 1
                    # x86_64: write, writev, sendto, sendmsg / read, readv, recvfrom, recvmsg
                    sends += nr in ("1", "20", "44", "46")
                    recvs += nr in ("0", "19", "45", "47")
                    threads[tid] = (sends, recvs, cpu(c.pid, tid), hist)
                except OSError:
                    pass
        except OSError:
            pass
        r = os.wait4(c.pid, os.WNOHANG)
        if r[0] != 0:
            status = r
            break
        time.sleep(0.01)
    ru = status[2]
    total = ru.ru_utime + ru.ru_stime
    out = c.stdout.read().decode()
    b1 = [cpu(p) for p in broker_pids]
    for p in broker_pids:
        st = dict(l.split(":", 1) for l in open(f"/proc/{p}/status"))
        print(f"  broker {p} VmHWM {st['VmHWM'].strip()} VmRSS {st['VmRSS'].strip()}", file=sys.stderr)
    for i, pp in enumerate(perfs):
        pp.send_signal(2)
        pp.wait()
        if not os.path.exists(f"/tmp/stormcpu/perf{i}.txt"):
            continue
        print(f"  perf broker {i}:", " ".join(l.split(",")[0] + " " + l.split(",")[2]
              for l in open(f"/tmp/stormcpu/perf{i}.txt") if "," in l), file=sys.stderr)
    res = None
    for line in out.splitlines():
        if line.startswith("{"):
            j = json.loads(line)
            if j.get("workload") == workload:
                res = j
    by = {}
    if os.environ.get("CPUMB_THREADS"):
        for tid, v in sorted(threads.items(), key=lambda x: int(x[0])):
            print("  thread", tid, v, file=sys.stderr)
    # Ice C++ client: the subscriber is the thread of its communicator's
    # server thread pool, i.e. the epoll-blocked thread with the most CPU;
    # the publishers' threads (futex-blocked in oneway sends) and their
    # client thread pools are the rest ("publishers"), beside the main
    # thread's 1 ms polling and idle threads.
    def blocked(h):
        h = {k: v for k, v in h.items() if not k.startswith("running")}
        return max(h, key=h.get) if h else None
    epoll = [(t, tid) for tid, (_, _, t, h) in threads.items() if blocked(h) in ("232", "281")]
    sub = max(epoll)[1] if epoll else None
    for tid, (_, _, t, h) in threads.items():
        k = "subscriber" if tid == sub else "publishers"
        by[k] = by.get(k, 0) + t
    seen = sum(by.values())
    by["unsampled"] = max(total - seen, 0)
    return res, [b - a for a, b in zip(b0, b1)], total, by


def main():
    kind, client, workload, events, runs = sys.argv[1:6]
    storm = sys.argv[6] if len(sys.argv) > 6 else None
    size = int(workload.rsplit("_", 1)[1])
    d = tempfile.mkdtemp(prefix="cpumb-")
    procs, proxy = start(kind, storm, d)
    rows = []
    try:
        # One warm-up run first (not counted): the brokers' heaps grow to
        # their budgets once, which costs page faults a long-running broker
        # does not pay again.
        run_client(client, proxy, workload, int(events), [p.pid for p in procs])
        for _ in range(int(runs)):
            res, bcpu, total, by = run_client(client, proxy, workload, int(events), [p.pid for p in procs])
            mb = res["received"] * size / 1e6
            row = {
                "mb_s": res["mb_s"], "lost": res["lost"], "mb": mb,
                "broker_ms_per_mb": [round(1000 * x / mb, 3) for x in bcpu],
                "broker_total_ms_per_mb": round(1000 * sum(bcpu) / mb, 3),
                "client_ms_per_mb": round(1000 * total / mb, 3),
                "by_thread_ms_per_mb": {k: round(1000 * v / mb, 3) for k, v in sorted(by.items())},
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
        shutil.rmtree(d, ignore_errors=True)
    med = lambda xs: sorted(xs)[len(xs) // 2]
    print(json.dumps({
        "broker": kind, "workload": workload, "runs": len(rows),
        "mb_s_median": med([r["mb_s"] for r in rows]),
        "broker_ms_per_mb_median": med([r["broker_total_ms_per_mb"] for r in rows]),
        "client_ms_per_mb_median": med([r["client_ms_per_mb"] for r in rows]),
        "publishers_ms_per_mb_median": med([r["by_thread_ms_per_mb"].get("publishers", 0) for r in rows]),
        "subscriber_ms_per_mb_median": med([r["by_thread_ms_per_mb"].get("subscriber", 0) for r in rows]),
        "unsampled_ms_per_mb_median": med([r["by_thread_ms_per_mb"].get("unsampled", 0) for r in rows]),
        "replica_ms_per_mb": [sorted(r["broker_ms_per_mb"], reverse=True) for r in rows],
    }))


if __name__ == "__main__":
    main()
