#!/usr/bin/env python3
"""Tonearm's web face beside Mopidy's HTTP frontend (Mopidy 3.4, JSON-RPC and its WebSocket), in one run:

1. state read round trip (Tonearm `GET /api/v1/state`, Mopidy JSON-RPC `core.playback.get_state`), p50/p99 over
   --calls calls, a new connection per call and then one kept-alive connection, timed by a C client
   (Benchmarks/http-timer/round-trips.c) beside the machine's floor (Benchmarks/http-timer/answerer.c) and SwiftNIO's
   (Benchmarks/Sources/nio-answerer);
2. pause/play sent over HTTP → the WebSocket frame that says so, median/p90 over --toggles toggles; for Tonearm also
   the same change's MPRIS PropertiesChanged(PlaybackStatus) on its private bus, and WS − MPRIS;
3. --clients (100) WebSocket clients following while playing for --seconds (20), a volume change every 0.5 s: the
   daemon's CPU and RSS, and the delay to the slowest client (median and max over the changes);
4. Tonearm's RSS playing with `[web] enabled = true` and `= false`: what the face costs;
5. the page's first load in Debian's headless Chromium (Selenium): bytes of `/`, `/app.js`, `/style.css`, and the
   time from navigation start to `#title` showing the track's title (Tonearm only).

Both daemons run side by side while 1 and 2 are timed, in --rounds rounds that take each server (and each floor) in
turn, so that the machine's drift over the run falls on all of them alike; the one timed plays, the other is paused. Prints a Markdown table (tonearm | mopidy |
tonearm ÷ mopidy | goal | met?). Never fails on a time.

  Benchmarks/web-face.py [--tonearmd PATH] [--calls N] [--toggles N] [--clients N] [--seconds S] [--skip-mopidy]
                         [--page-loads N] [--memory-runs N] [--json FILE]

Runs itself under .build-venv/bench (scripts/bench-venv: pinned websockets and selenium) whatever python3 starts it.
Everything listens on 127.0.0.1; every wait is for a condition and has a time limit; every process it starts is in a
process group of its own, ended at the end, on errors and on Ctrl-C.
"""
import argparse, asyncio, collections, json, math, os, re, shutil, signal, socket, statistics, subprocess, sys
import tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TITLE = "WebFaceBench"          # the generated track's title tag (no spaces: gst-launch re-splits its arguments)
TRACK_SECONDS = 180


# ---- the venv ---------------------------------------------------------------------------------------------------

def ensure_venv():
    """Re-executes this script under the bench venv unless it already runs there."""
    if os.environ.get("TONEARM_WEB_BENCH_VENV") == "1":
        return
    bindir = subprocess.run([os.path.join(REPO, "scripts/bench-venv")], check=True, capture_output=True,
                            text=True, timeout=600).stdout.strip().splitlines()[-1]
    python = os.path.join(bindir, "python")
    os.environ["TONEARM_WEB_BENCH_VENV"] = "1"
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


# ---- processes --------------------------------------------------------------------------------------------------

PROCS = []   # every process started, each a process group of its own


def spawn(args, log=None, env=None, **kw):
    out = open(log, "ab") if log else subprocess.DEVNULL
    p = subprocess.Popen(args, env=env, stdout=kw.pop("stdout", out), stderr=kw.pop("stderr", out),
                         stdin=subprocess.DEVNULL, start_new_session=True, **kw)
    PROCS.append(p)
    return p


def stop(p, timeout=15):
    if p.poll() is None:
        try: os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError: pass
        try: p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try: os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError: pass
            p.wait(timeout=10)
    if p in PROCS:
        PROCS.remove(p)


def stop_all():
    for p in list(PROCS):
        try: stop(p)
        except Exception as e: print(f"web-face: could not stop pid {p.pid}: {e}", file=sys.stderr)


def end_processes_naming(marker, timeout=15):
    """Waits for every process whose command line names marker (a path of ours: a browser's profile) to end; ends
    what is left after timeout, by process id."""
    def left():
        pids = []
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    if marker.encode() in open(f"/proc/{d}/cmdline", "rb").read():
                        pids.append(int(d))
                except OSError:
                    pass
        return pids
    deadline = time.monotonic() + timeout
    while left() and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left():
        try: os.kill(pid, signal.SIGKILL)
        except ProcessLookupError: pass


def remove_tree(path):
    for _ in range(50):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            return
        time.sleep(0.1)
    print(f"web-face: could not remove {path}", file=sys.stderr)


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def wait_for(what, condition, timeout, interval=0.05):
    """Polls condition() until it answers something truthy; TimeoutError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        v = condition()
        if v:
            return v
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def status_mib(pid, *keys):
    """Fields of /proc/PID/status in MiB (VmRSS, RssAnon, RssFile, …)."""
    found = {}
    for line in open(f"/proc/{pid}/status"):
        k = line.split(":", 1)[0]
        if k in keys:
            found[k] = int(line.split()[1]) / 1024
    return [found.get(k, float("nan")) for k in keys]


def rss_mib(pid):
    return status_mib(pid, "VmRSS")[0]


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")   # utime + stime


def pct(xs, q):
    """Nearest-rank percentile (q in 0…100) of xs."""
    s = sorted(xs)
    return s[max(0, math.ceil(q / 100 * len(s)) - 1)] if s else float("nan")


# ---- HTTP (raw, so the client's own cost stays small and the same for both) --------------------------------------

def http_request_bytes(method, path, port, body=None, headers=()):
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Accept: */*"]
    data = b""
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
    elif method in ("POST", "PUT"):
        lines.append("Content-Length: 0")
    lines += list(headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def parse_head(head):
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for l in lines[1:]:
        if ":" in l:
            k, v = l.split(":", 1); headers[k.strip().lower()] = v.strip()
    return status, headers


class SyncHTTP:
    """One HTTP/1.1 connection over a plain socket (Content-Length and chunked bodies)."""
    def __init__(self, port, timeout=30):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.sock.makefile("rb")

    def request(self, method, path, body=None, headers=()):
        self.sock.sendall(http_request_bytes(method, path, self.port, body, headers))
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            line = self.f.readline()
            if not line:
                raise ConnectionError("connection closed before the answer")
            head += line
        status, h = parse_head(head)
        if "content-length" in h:
            data = self.f.read(int(h["content-length"]))
        elif h.get("transfer-encoding", "").lower() == "chunked":
            data = b""
            while True:
                n = int(self.f.readline().split(b";")[0], 16)
                chunk = self.f.read(n + 2)[:n]
                if n == 0:
                    break
                data += chunk
        elif status in (204, 304):
            data = b""
        else:
            data = self.f.read()
        return status, h, data

    def close(self):
        self.f.close(); self.sock.close()


def http_once(port, method, path, body=None, timeout=30):
    c = SyncHTTP(port, timeout)
    try:
        return c.request(method, path, body)
    finally:
        c.close()


class AsyncHTTP:
    """One kept-alive HTTP/1.1 connection on the event loop (so WebSocket frames are stamped while it waits)."""
    @classmethod
    async def open(cls, port):
        self = cls()
        self.port = port
        self.r, self.w = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 30)
        self.w.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self

    def send(self, method, path, body=None):
        self.w.write(http_request_bytes(method, path, self.port, body))

    async def answer(self, timeout=30):
        async def read():
            status, h = parse_head(await self.r.readuntil(b"\r\n\r\n"))
            if "content-length" in h:
                return status, await self.r.readexactly(int(h["content-length"]))
            if h.get("transfer-encoding", "").lower() == "chunked":
                data = b""
                while True:
                    n = int((await self.r.readline()).split(b";")[0], 16)
                    chunk = (await self.r.readexactly(n + 2))[:n]
                    if n == 0:
                        return status, data
                    data += chunk
            return status, b""
        return await asyncio.wait_for(read(), timeout)

    def close(self):
        self.w.close()


# ---- the two daemons, as the benchmark drives them ----------------------------------------------------------------

class Tonearm:
    name = "tonearm"

    def __init__(self, port):
        self.port = port

    def state_request(self):
        return ("GET", "/api/v1/state", None, '"status"')

    def state_of(self):
        return json.loads(http_once(self.port, "GET", "/api/v1/state")[2])

    def playing_at(self, seconds):
        s = self.state_of()
        return s["status"] == "Playing" and s["position"] >= seconds

    def is_paused(self):
        return self.state_of()["status"] == "Paused"

    ws_path = "/api/v1/events"

    def pause_request(self, pause):
        return ("POST", "/api/v1/player/pause" if pause else "/api/v1/player/play", None)

    def pause_event(self, message, pause):
        m = json.loads(message)
        return m.get("type") == "state" and m["state"]["status"] == ("Paused" if pause else "Playing")

    def volume_values(self, n):
        return [round(0.30 + (k % 40) * 0.01, 2) for k in range(n)]

    def volume_request(self, v):
        return ("PUT", "/api/v1/player/volume", {"volume": v})

    def volume_event(self, message):
        m = json.loads(message)
        return m["state"]["volume"] if m.get("type") == "state" else None


class Mopidy:
    name = "mopidy"

    def __init__(self, port):
        self.port = port
        self.rpc_id = 0

    def rpc_body(self, method, params=None):
        self.rpc_id += 1
        return {"jsonrpc": "2.0", "id": self.rpc_id, "method": method, "params": params or {}}

    def rpc(self, method, params=None, timeout=30):
        status, _, body = http_once(self.port, "POST", "/mopidy/rpc", self.rpc_body(method, params), timeout)
        answer = json.loads(body)
        if status != 200 or "error" in answer:
            raise RuntimeError(f"Mopidy {method} answered {status}: {body[:300]!r}")
        return answer["result"]

    def state_request(self):
        return ("POST", "/mopidy/rpc", json.dumps(self.rpc_body("core.playback.get_state")), '"result"')

    def playing_at(self, seconds):
        return self.rpc("core.playback.get_state") == "playing" and \
            (self.rpc("core.playback.get_time_position") or 0) >= seconds * 1000

    def is_paused(self):
        return self.rpc("core.playback.get_state") == "paused"

    ws_path = "/mopidy/ws"

    def pause_request(self, pause):
        return ("POST", "/mopidy/rpc", self.rpc_body("core.playback.pause" if pause else "core.playback.resume"))

    def pause_event(self, message, pause):
        m = json.loads(message)
        return m.get("event") == "playback_state_changed" and m.get("new_state") == ("paused" if pause else "playing")

    def volume_values(self, n):
        return [30 + k % 40 for k in range(n)]

    def volume_request(self, v):
        return ("POST", "/mopidy/rpc", self.rpc_body("core.mixer.set_volume", {"volume": v}))

    def volume_event(self, message):
        m = json.loads(message)
        return m.get("volume") if m.get("event") == "volume_changed" else None


def session_env(root):
    """A fresh HOME and XDG folders under root."""
    env = dict(os.environ)
    for k in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
        env[k] = os.path.join(root, k.lower())
        os.makedirs(env[k], mode=0o700, exist_ok=True)
    env["HOME"] = root
    return env


def start_bus(root, env):
    """A private dbus-daemon; its address."""
    # Listening in root, so every client of it names root in its command line (see end_processes_naming).
    p = spawn(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1", f"--address=unix:dir={root}"], env=env,
              stdout=subprocess.PIPE, stderr=open(os.path.join(root, "dbus-daemon.log"), "ab"))
    address = p.stdout.readline().decode().strip()   # printed once it listens
    if not address:
        raise RuntimeError("dbus-daemon printed no address")
    return address


def bus_get(address, interface, prop, timeout=10):
    r = subprocess.run(["dbus-send", f"--bus={address}", "--print-reply", "--dest=org.mpris.MediaPlayer2.tonearm",
                        "/org/mpris/MediaPlayer2", "org.freedesktop.DBus.Properties.Get", f"string:{interface}",
                        f"string:{prop}"], capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        return None
    m = re.search(r'variant\s+(?:string "(.*)"|int64 (-?\d+))', r.stdout)
    return None if not m else (m.group(1) if m.group(1) is not None else int(m.group(2)))


def start_tonearm(tonearmd, root, media, web=True):
    """tonearmd playing media on a private bus; (process, bus address, web port or None)."""
    os.makedirs(root)
    env = session_env(root)
    address = start_bus(root, env)
    env["DBUS_SESSION_BUS_ADDRESS"] = address
    cfg = os.path.join(env["XDG_CONFIG_HOME"], "tonearm"); os.makedirs(cfg)
    open(os.path.join(cfg, "config.toml"), "w").write(f"[web]\nenabled = {'true' if web else 'false'}\n")
    log = os.path.join(root, "tonearmd.log")
    p = spawn([tonearmd, "--audio-sink", "fakesink sync=true", "--web-port", "0", media], log=log, env=env)

    def alive():
        if p.poll() is not None:
            raise RuntimeError(f"tonearmd exited ({p.returncode}); its log: {open(log).read()[-2000:]}")
    port = None
    if web:
        def web_address():
            alive()
            a = bus_get(address, "org.tonearm.Player1", "WebAddress")
            return a or None
        url = wait_for("tonearmd's Player1.WebAddress", web_address, 120)
        port = int(re.match(r"http://127\.0\.0\.1:(\d+)/", url).group(1))
    return p, address, port


def start_mopidy(root, media, port):
    os.makedirs(root)
    env = session_env(root)
    conf = os.path.join(root, "mopidy.conf")
    open(conf, "w").write(
        f"[core]\ncache_dir = {root}/cache\nconfig_dir = {root}/config\ndata_dir = {root}/data\n"
        f"[logging]\nverbosity = -1\ncolor = false\n"
        f"[audio]\noutput = fakesink sync=true\n"
        f"[http]\nhostname = 127.0.0.1\nport = {port}\nzeroconf =\n"
        f"[file]\nmedia_dirs = {os.path.dirname(media)}|Media\nmetadata_timeout = 10000\n"
        f"[m3u]\nenabled = false\n[stream]\nenabled = false\n")
    log = os.path.join(root, "mopidy.log")
    p = spawn(["mopidy", "--config", conf], log=log, env=env)
    m = Mopidy(port)

    def up():
        if p.poll() is not None:
            raise RuntimeError(f"mopidy exited ({p.returncode}); its log: {open(log).read()[-2000:]}")
        try: return m.rpc("core.get_version", timeout=5)
        except (OSError, ValueError): return None
    wait_for("Mopidy's JSON-RPC", up, 120, 0.1)
    m.rpc("core.tracklist.add", {"uris": ["file://" + media]})
    m.rpc("core.tracklist.set_repeat", {"value": True})
    m.rpc("core.playback.play")
    return p, m


# ---- 1. state read round trip -------------------------------------------------------------------------------------

HTTP_TIMER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "http-timer")
_timer_tools = {}


def timer_tool(name):
    """Benchmarks/http-timer/NAME.c, compiled once a run: the state reads are timed from C, so a figure is the server's
    and the kernel's and not this interpreter's (python's own client added 0.1-0.2 ms a call here)."""
    if name not in _timer_tools:
        cc = next((c for c in ("cc", "clang", "gcc") if shutil.which(c)), None)
        if cc is None:
            raise RuntimeError("web-face: no C compiler (cc, clang or gcc) to build Benchmarks/http-timer")
        out = os.path.join(tempfile.mkdtemp(prefix="tonearm-http-timer-"), name)
        subprocess.run([cc, "-O2", "-o", out, os.path.join(HTTP_TIMER, name + ".c"), "-lpthread"], check=True)
        _timer_tools[name] = out
    return _timer_tools[name]


def round_trip_samples(daemon, kind, calls):
    """`calls` state reads of one kind ("new": a TCP connection per call; "kept": all on one), in ms."""
    method, path, body, must = daemon.state_request()
    answer = subprocess.run([timer_tool("round-trips"), str(daemon.port), method, path, body or "-", kind,
                             str(calls), must, "all"], capture_output=True, text=True, timeout=600)
    if answer.returncode != 0:
        raise RuntimeError(f"{daemon.name}: {method} {path}: {answer.stderr.strip()}")
    return [float(x) for x in answer.stdout.splitlines()[1].split()]


def hold(daemons, playing):
    """Pauses every daemon but `playing` and plays that one (None: pauses them all), and waits until each is so: the
    one timed plays, as a remote finds it, and the others make no noise on the machine meanwhile (Mopidy playing
    costs 2-3 % of a core, tonearm a tenth of that; left playing, each would weigh on the other's turn unequally)."""
    for d in daemons:
        pause = d is not playing
        method, path, body = d.pause_request(pause)
        status, _, answer = http_once(d.port, method, path, body)
        if status != 200:
            raise RuntimeError(f"{d.name}: {path} answered {status}: {answer[:200]!r}")
        wait_for(f"{d.name} {'paused' if pause else 'playing'}", d.is_paused if pause else lambda: d.playing_at(0), 30, 0.02)


def interleaved_round_trips(targets, calls, rounds, daemons=()):
    """State reads of every target in turn, `rounds` times (the order reversed every other round), `calls` of each
    kind per target in all: the machine's drift over the minutes of a run then falls on every target alike, where
    measuring one after the other put it between them. `daemons`: the players among the targets, held by `hold`
    (a floor's turn pauses them all). {name: {"new p50", "new p99", "kept p50", "kept p99"}}; a target that fails is
    left out of the rounds after it."""
    per = max(50, calls // rounds)
    samples = {name: {"new": [], "kept": []} for name in targets}
    failed = set()
    for r in range(rounds):
        order = list(targets.items())
        if r % 2:
            order.reverse()
        for name, target in order:
            if name in failed:
                continue
            try:
                if daemons:
                    hold(daemons, target if target in daemons else None)
                for kind in ("new", "kept"):
                    samples[name][kind] += round_trip_samples(target, kind, per)
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                print(f"web-face: {name}: state reads failed: {e!r}", file=sys.stderr)
                failed.add(name)
    return {name: {f"{kind} {q}": (statistics.median(xs) if q == "p50" else pct(xs, 99))
                   for kind, xs in kinds.items() if xs for q in ("p50", "p99")}
            for name, kinds in samples.items()}


class Floor:
    """A floor of a read on this machine: a process of its own that writes one fixed answer the size of tonearm's
    state to every request, timed by the same C client. `c` is Benchmarks/http-timer/answerer.c (one epoll loop, no
    parsing past the header's end): no server answers faster here, so a goal below it cannot be shown on this
    machine. `nio` is Benchmarks/Sources/nio-answerer (SwiftNIO's HTTP/1.1 codec on one event loop, no routing, no
    task per connection): no server built on SwiftNIO, as Hummingbird and so the web face are, answers faster."""

    def __init__(self, kind, body_bytes):
        self.name = "floor " + kind
        self.proc = subprocess.Popen([timer_tool("answerer") if kind == "c" else nio_answerer(), str(body_bytes)],
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())

    def state_request(self):
        return ("GET", "/api/v1/state", None, "x")

    def stop(self):
        self.proc.kill(); self.proc.wait()


def nio_answerer():
    """Benchmarks/Sources/nio-answerer, built in release (a few seconds once the package's NIO is built)."""
    subprocess.run(["swift", "build", "-c", "release", "--product", "nio-answerer"], cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return os.path.join(REPO, ".build/release/nio-answerer")



# ---- WebSocket clients that note when each frame's bytes were read ------------------------------------------------

def stamped_connection_class():
    from websockets.asyncio.client import ClientConnection
    from websockets.frames import Frame, Opcode

    class Stamped(ClientConnection):
        """Each complete data frame gets the wall-clock time of the read that brought its last bytes."""
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.stamps = collections.deque()
            self.now = 0.0

        def data_received(self, data):
            self.now = time.time()
            super().data_received(data)

        def process_event(self, event):
            if isinstance(event, Frame) and event.opcode in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT) and event.fin:
                self.stamps.append(self.now)
            super().process_event(event)
    return Stamped


async def ws_connect(port, path):
    from websockets.asyncio.client import connect
    return await asyncio.wait_for(connect(f"ws://127.0.0.1:{port}{path}", create_connection=stamped_connection_class(),
                                          compression=None, max_size=None, ping_interval=None, open_timeout=30,
                                          close_timeout=5), 60)


async def ws_follow(ws, on_message):
    """Calls on_message(text, stamp) for every frame until the connection ends."""
    from websockets.exceptions import ConnectionClosed
    try:
        async for message in ws:
            on_message(message, ws.stamps.popleft())
    except ConnectionClosed:
        pass


# ---- 2. pause/play → the WebSocket event (and MPRIS) --------------------------------------------------------------

class DBusMonitor:
    """dbus-monitor on the private bus, read on the event loop: PlaybackStatus changes with dbus-monitor's own
    receive time (`time=` of its header line) and the time the line was read here."""
    def __init__(self):
        self.events = []    # (status, dbus-monitor's time, read time)
        self.changed = asyncio.Event()
        self.proc = self.task = None

    async def start(self, address):
        self.proc = await asyncio.create_subprocess_exec(
            "dbus-monitor", "--address", address,
            "type='signal',path='/org/mpris/MediaPlayer2',interface='org.freedesktop.DBus.Properties',"
            "member='PropertiesChanged'",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
        async def monitoring():   # it prints NameLost for its own name once it is a monitor
            while True:
                line = await self.proc.stdout.readline()
                if not line:
                    raise RuntimeError("dbus-monitor ended before it was monitoring")
                if b"member=NameLost" in line:
                    return
        await asyncio.wait_for(monitoring(), 30)
        self.task = asyncio.ensure_future(self.read())

    async def read(self):
        header, read_at, want_value = None, None, False
        while True:
            line = await self.proc.stdout.readline()
            now = time.time()
            if not line:
                return
            text = line.decode(errors="replace")
            if not text.startswith(" "):
                m = re.search(r"time=([\d.]+)", text)
                header, read_at, want_value = (float(m.group(1)) if m else None), now, False
            elif 'string "PlaybackStatus"' in text:
                want_value = True
            elif want_value:
                m = re.search(r'string "(\w+)"', text)
                if m and header is not None:
                    self.events.append((m.group(1), header, read_at))
                    self.changed.set()
                want_value = False

    async def stop(self):
        if self.task: self.task.cancel()
        if self.proc and self.proc.returncode is None:
            try: os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError: pass
            await asyncio.wait_for(self.proc.wait(), 10)


async def pause_to_event(daemon, toggles, bus_address=None):
    ws = await ws_connect(daemon.port, daemon.ws_path)
    frames = []          # (text, stamp)
    changed = asyncio.Event()

    def got(message, stamp):
        frames.append((message, stamp)); changed.set()
    follower = asyncio.ensure_future(ws_follow(ws, got))
    monitor = DBusMonitor() if bus_address else None
    http = None
    ws_delays, bus_delays, bus_read_delays, diffs, diffs_read, missing_ws, missing_bus = [], [], [], [], [], 0, 0
    try:
        if monitor:
            await monitor.start(bus_address)
        http = await AsyncHTTP.open(daemon.port)
        for i in range(toggles + 2):    # the first pause and play are untimed
            pause = i % 2 == 0
            status = "Paused" if pause else "Playing"
            f0, b0 = len(frames), len(monitor.events) if monitor else 0
            method, path, body = daemon.pause_request(pause)
            sent = time.time()
            http.send(method, path, body)
            answer = asyncio.ensure_future(http.answer())
            ws_at = bus_at = None
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                if ws_at is None:
                    for message, stamp in frames[f0:]:
                        if daemon.pause_event(message, pause):
                            ws_at = stamp; break
                if monitor and bus_at is None:
                    for s, when, read_at in monitor.events[b0:]:
                        if s == status:
                            bus_at = (when, read_at); break
                if ws_at is not None and (bus_at is not None or not monitor) and answer.done():
                    break
                changed.clear()
                if monitor: monitor.changed.clear()
                waits = [asyncio.ensure_future(changed.wait())] + ([asyncio.ensure_future(monitor.changed.wait())] if monitor else [])
                if not answer.done(): waits.append(answer)
                done, pending = await asyncio.wait(waits, timeout=max(0.0, deadline - time.monotonic()),
                                                   return_when=asyncio.FIRST_COMPLETED)
                for w in pending:
                    if w is not answer: w.cancel()
            status_code, reply = await answer
            if status_code != 200:
                raise RuntimeError(f"{daemon.name}: {path} answered {status_code}: {reply[:200]!r}")
            if i < 2:
                continue
            if ws_at is None: missing_ws += 1
            else: ws_delays.append((ws_at - sent) * 1e3)
            if monitor:
                if bus_at is None: missing_bus += 1
                else:
                    bus_delays.append((bus_at[0] - sent) * 1e3); bus_read_delays.append((bus_at[1] - sent) * 1e3)
                    if ws_at is not None:
                        diffs.append((ws_at - bus_at[0]) * 1e3); diffs_read.append((ws_at - bus_at[1]) * 1e3)
    finally:
        if http: http.close()
        await asyncio.wait_for(ws.close(), 10)
        follower.cancel()
        if monitor: await monitor.stop()
    return {"ws": ws_delays, "ws missing": missing_ws, "mpris": bus_delays if monitor else None,
            "mpris missing": missing_bus, "mpris read": bus_read_delays, "diff": diffs, "diff read": diffs_read}


def toggle_figures(raw):
    """The pooled delays of `pause_to_event` runs as the table's figures."""
    def median(xs): return statistics.median(xs) if xs else None
    def p90(xs): return pct(xs, 90) if xs else None
    out = {"ws median": median(raw["ws"]), "ws p90": p90(raw["ws"]), "ws missing": raw["ws missing"]}
    if raw["mpris"] is not None:
        out.update({"mpris median": median(raw["mpris"]), "mpris p90": p90(raw["mpris"]),
                    "mpris missing": raw["mpris missing"], "diff median": median(raw["diff"]), "diff p90": p90(raw["diff"]),
                    "diff read median": median(raw["diff read"]), "diff read p90": p90(raw["diff read"]),
                    "mpris read median": median(raw["mpris read"])})
    return out


def interleaved_toggles(daemons, toggles, rounds):
    """Pause/play toggles of every daemon in turn, `rounds` times, `toggles` timed ones each in all (each turn starts
    with an untimed pause and play). `daemons`: {name: (daemon, bus address or None)}. {name: figures}; a daemon
    that fails is left out of the rounds after it (and of the result, if it never finished a turn)."""
    per = max(4, toggles // rounds)
    pooled, failed = {}, set()
    for r in range(rounds):
        order = list(daemons.items())
        if r % 2:
            order.reverse()
        for name, (daemon, bus) in order:
            if name in failed:
                continue
            try:
                hold([d for d, _ in daemons.values()], daemon)
                raw = asyncio.run(pause_to_event(daemon, per, bus))
                # Toggled an even number of times: playing again before the next daemon's turn.
                wait_for(f"{name} playing after its toggles", lambda: daemon.playing_at(0), 30, 0.05)
            except (RuntimeError, TimeoutError, OSError, ValueError) as e:
                print(f"web-face: {name}: toggles failed: {e!r}", file=sys.stderr)
                failed.add(name)
                continue
            if name not in pooled:
                pooled[name] = raw
            else:
                for key, value in raw.items():
                    if isinstance(value, list): pooled[name][key] += value
                    elif isinstance(value, int): pooled[name][key] += value
    return {name: toggle_figures(raw) for name, raw in pooled.items()}


# ---- 3. many clients following ------------------------------------------------------------------------------------

async def many_clients(daemon, pid, clients, seconds):
    rss_before = rss_mib(pid)
    conns = await asyncio.gather(*(ws_connect(daemon.port, daemon.ws_path) for _ in range(clients)))
    changes = []                           # (value, sent)
    arrivals = [dict() for _ in conns]     # client → change index → stamp
    next_index = [0] * len(conns)
    closed = [0]

    frames, received = [0], [0]

    def follower(k):
        def got(message, stamp):
            if changes:
                frames[0] += 1; received[0] += len(message)
            v = daemon.volume_event(message)
            if v is None:
                return
            # The first change from this client's next one on whose value this is (a skipped value is missed).
            for j in range(next_index[k], len(changes)):
                if abs(changes[j][0] - v) < 1e-3:
                    arrivals[k][j] = stamp
                    next_index[k] = j + 1
                    break
        return got
    followers = [asyncio.ensure_future(ws_follow(c, follower(k))) for k, c in enumerate(conns)]
    http = await AsyncHTTP.open(daemon.port)
    await asyncio.sleep(0)
    rss_connected, rss_peak = rss_mib(pid), 0.0
    values = daemon.volume_values(int(seconds / 0.5))
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    try:
        for k, v in enumerate(values):
            # On a fixed schedule: a change every 0.5 s, whatever the answers take.
            await asyncio.sleep(max(0.0, t0 + k * 0.5 - time.monotonic()))
            method, path, body = daemon.volume_request(v)
            changes.append((v, time.time()))
            http.send(method, path, body)
            status_code, reply = await http.answer()
            if status_code != 200:
                raise RuntimeError(f"{daemon.name}: volume change answered {status_code}: {reply[:200]!r}")
            rss_peak = max(rss_peak, rss_mib(pid))
        await asyncio.sleep(max(0.0, t0 + len(values) * 0.5 - time.monotonic()))
        cpu = cpu_seconds(pid) - cpu0
        window = time.monotonic() - t0
        # The last changes' frames: waited for until every client has them, 5 s at most.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(len(a) < len(changes) and not f.done() for a, f in zip(arrivals, followers)):
            await asyncio.sleep(0.01)
    finally:
        http.close()
        for c in conns:
            if c.close_code is not None: closed[0] += 1
        await asyncio.wait_for(asyncio.gather(*(c.close() for c in conns), return_exceptions=True), 30)
        for f in followers: f.cancel()
    slowest, incomplete = [], 0
    for j, (_, sent) in enumerate(changes):
        stamps = [a[j] for a in arrivals if j in a]
        if len(stamps) < len(conns):
            incomplete += 1
        if stamps:
            slowest.append((max(stamps) - sent) * 1e3)
    return {"cpu s": cpu, "cpu %": 100 * cpu / window, "window s": window, "rss before": rss_before,
            "rss connected": rss_connected, "rss peak": max(rss_peak, rss_connected),
            "slowest median": statistics.median(slowest) if slowest else None,
            "slowest max": max(slowest) if slowest else None, "changes": len(changes),
            "changes missing a client": incomplete, "clients closed early": closed[0],
            "frames per client": frames[0] / len(conns), "bytes per client": received[0] / len(conns)}


# ---- 5. the page's first load -------------------------------------------------------------------------------------

OBSERVER = """
(() => {
  const want = %s;
  let done = false;
  const check = () => {
    const e = document.getElementById('title');
    if (!done && e && e.textContent === want) {
      done = true;
      window.__titleShown = performance.now();
      requestAnimationFrame(() => { window.__titleFrame = performance.now(); });
      return true;
    }
    return false;
  };
  const watch = new MutationObserver(() => { if (check()) watch.disconnect(); });
  watch.observe(document, {childList: true, subtree: true, characterData: true});
})();
""" % json.dumps(TITLE)


def page_load(port, root, loads, env):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait
    sizes = {}
    for path in ("/", "/app.js", "/style.css"):
        status, h, body = http_once(port, "GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path} answered {status}")
        sizes[path] = int(h.get("content-length", len(body)))
    runs = []
    for k in range(loads):   # a new browser and profile each time: a first load, nothing cached, no open socket
        profile = os.path.join(root, f"chromium-{k}")
        options = Options()
        options.binary_location = "/usr/bin/chromium"
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    f"--user-data-dir={profile}", "--window-size=1280,900", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update"):
            options.add_argument(arg)
        service = Service(executable_path="/usr/bin/chromedriver", env=env, log_output=os.path.join(root, "chromedriver.log"))
        driver = webdriver.Chrome(options=options, service=service)
        try:
            driver.set_page_load_timeout(60)
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVER})
            driver.get(f"http://127.0.0.1:{port}/")
            WebDriverWait(driver, 30, poll_frequency=0.05).until(
                lambda d: d.execute_script("return window.__titleFrame !== undefined"))
            r = driver.execute_script("""
              const n = performance.getEntriesByType('navigation')[0];
              const res = performance.getEntriesByType('resource');
              const pick = p => res.find(e => new URL(e.name).pathname === p);
              return {shown: window.__titleShown, frame: window.__titleFrame, dcl: n.domContentLoadedEventEnd,
                      load: n.loadEventEnd, responseEnd: n.responseEnd,
                      wire: n.transferSize + ['/app.js', '/style.css'].reduce((s, p) => s + (pick(p)?.transferSize || 0), 0),
                      requests: res.length + 1,
                      allWire: n.transferSize + res.reduce((s, e) => s + (e.transferSize || 0), 0)};""")
            runs.append(r)
        finally:
            driver.quit()
            end_processes_naming(profile)
        shutil.rmtree(profile, ignore_errors=True)
    med = lambda key: statistics.median(r[key] for r in runs)
    return {"bytes /": sizes["/"], "bytes /app.js": sizes["/app.js"], "bytes /style.css": sizes["/style.css"],
            "bytes total": sum(sizes.values()), "wire three files": med("wire"), "wire all requests": med("allWire"),
            "requests": med("requests"), "title shown ms": med("shown"), "title frame ms": med("frame"),
            "dcl ms": med("dcl"), "load ms": med("load"), "loads": len(runs),
            "title shown all": [round(r["shown"], 1) for r in runs]}


# ---- the run ------------------------------------------------------------------------------------------------------

def make_media(root):
    music = os.path.join(root, "media"); os.makedirs(music)
    path = os.path.join(music, "web-face-bench.ogg")
    subprocess.run(["gst-launch-1.0", "-q", "audiotestsrc", f"num-buffers={TRACK_SECONDS * 44100 // 1024}",
                    "samplesperbuffer=1024", "wave=sine", "freq=440", "volume=0.3", "!",
                    "audio/x-raw,rate=44100,channels=2", "!", "audioconvert", "!",
                    "taginject", f'tags=title="{TITLE}",artist="Tonearm",album="Benchmarks"', "!",
                    "vorbisenc", "quality=0.1", "!", "oggmux", "!", "filesink", f"location={path}"],
                   check=True, timeout=300)
    return path


def measure_memory(o, home, media, runs):
    """RSS of tonearmd playing, [web] off and on, each in a fresh session, once it has played 5 s."""
    off, on = [], []   # (VmRSS, RssAnon, RssFile)
    for k in range(runs):
        for web, into in ((False, off), (True, on)):
            root = os.path.join(home, f"memory-{k}-{'on' if web else 'off'}")
            p, address, _ = start_tonearm(o.tonearmd, root, media, web)
            try:
                wait_for("tonearmd playing 5 s", lambda: (bus_get(address, "org.mpris.MediaPlayer2.Player", "Position") or 0) >= 5_000_000, 120, 0.1)
                into.append(status_mib(p.pid, "VmRSS", "RssAnon", "RssFile"))
            finally:
                stop(p)
                stop_all_buses()
    if not off:
        return {}   # --memory-runs 0: the memory rows print as missing
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    return {"rss web off": med(off, 0), "rss web on": med(on, 0),
            "web cost": med(on, 0) - med(off, 0), "web cost anon": med(on, 1) - med(off, 1),
            "web cost file": med(on, 2) - med(off, 2),
            "rss off all": [round(x[0], 1) for x in off], "rss on all": [round(x[0], 1) for x in on]}


def stop_all_buses():
    for p in list(PROCS):
        if p.args and p.args[0] == "dbus-daemon":
            stop(p)


def measure_interleaved(o, tonearm, mopidy, results, bus_address):
    """The state reads (tonearm, Mopidy and the two floors) and the toggles (tonearm and Mopidy), in rounds that take
    each in turn while both daemons play, into results["tonearm"] and results["mopidy"]."""
    c = SyncHTTP(tonearm.port); size = len(c.request("GET", "/api/v1/state")[2]); c.close()
    floors = []
    try:
        targets = {"tonearm": tonearm}
        if mopidy:
            targets["mopidy"] = mopidy
        floors.append(Floor("c", size)); targets["floor"] = floors[-1]
        try:
            floors.append(Floor("nio", size)); targets["nio floor"] = floors[-1]
        except (OSError, subprocess.CalledProcessError, ValueError) as e:
            print(f"web-face: no SwiftNIO floor: {e!r}", file=sys.stderr)
        print(f"web-face: state read round trips, {o.rounds} rounds of {', '.join(targets)}", file=sys.stderr)
        players = [tonearm] + ([mopidy] if mopidy else [])
        reads = interleaved_round_trips(targets, o.calls, o.rounds, players)
    finally:
        for f in floors:
            f.stop()
    results["tonearm"].update(reads.get("tonearm", {}))
    for floor in ("floor", "nio floor"):
        results["tonearm"].update({f"{floor} {k}": v for k, v in reads.get(floor, {}).items()})
    if mopidy:
        results["mopidy"].update(reads.get("mopidy", {}))
    daemons = {"tonearm": (tonearm, bus_address)}
    if mopidy:
        daemons["mopidy"] = (mopidy, None)
    print(f"web-face: pause/play → events, {o.rounds} rounds of {', '.join(daemons)}", file=sys.stderr)
    toggles = interleaved_toggles(daemons, o.toggles, o.rounds)
    results["tonearm"].update(toggles.get("tonearm", {}))
    if mopidy and "mopidy" in toggles:
        results["mopidy"].update(toggles["mopidy"])


def versions(o):
    def run(args):
        try: return subprocess.run(args, capture_output=True, text=True, timeout=30).stdout.strip()
        except Exception: return "?"
    import websockets, selenium
    return {"tonearm": run(["git", "-C", REPO, "describe", "--always", "--dirty"]),
            "tonearmd": os.path.abspath(o.tonearmd) + time.strftime(", built %Y-%m-%d %H:%M", time.localtime(os.path.getmtime(o.tonearmd))),
            "mopidy": run(["mopidy", "--version"]) if shutil.which("mopidy") else "not installed",
            "chromium": run(["/usr/bin/chromium", "--version"]),
            "websockets": websockets.__version__, "selenium": selenium.__version__}


def fmt(v, digits=2):
    if v is None: return "—"
    if isinstance(v, str): return v
    if abs(v) >= 100 and digits > 1: digits = 1
    return f"{v:.{digits}f}"


def report(results, o):
    t, m = results["tonearm"], results.get("mopidy")
    mopidy_cell = results.get("mopidy note", "skipped")
    rows = []   # (metric, tonearm, mopidy, goal kind)

    row_keys = []

    def row(label, key, goal=None, digits=3, mkey=None, mtext=None):
        row_keys.append((label, key))
        tv = t.get(key)
        mv = (m or {}).get(mkey or key) if mtext is None else mtext
        rows.append((label, tv, mv if m is not None or mtext is not None else mopidy_cell, goal, digits))
    row("state read p50, new connection per call (ms)", "new p50", "fifth")
    row("state read p99, new connection per call (ms)", "new p99", "fifth")
    row("state read p50, one kept-alive connection (ms)", "kept p50", "fifth")
    row("state read p99, one kept-alive connection (ms)", "kept p99", "fifth")
    row("floor: a minimal C answerer, new connection, p50 (ms)", "floor new p50", None, mtext="n/a")
    row("floor: a minimal C answerer, kept-alive, p50 (ms)", "floor kept p50", None, mtext="n/a")
    row("floor on SwiftNIO: its HTTP codec and a fixed answer, new connection, p50 (ms)", "nio floor new p50", None, mtext="n/a")
    row("floor on SwiftNIO: its HTTP codec and a fixed answer, new connection, p99 (ms)", "nio floor new p99", None, mtext="n/a")
    row("floor on SwiftNIO: its HTTP codec and a fixed answer, kept-alive, p50 (ms)", "nio floor kept p50", None, mtext="n/a")
    row("pause/play → WebSocket event, median (ms)", "ws median", "fifth")
    row("pause/play → WebSocket event, p90 (ms)", "ws p90", "fifth")
    row("pause/play → MPRIS PropertiesChanged, median (ms)", "mpris median", None, mtext="n/a")
    row("WebSocket − MPRIS for the same change, median (ms)", "diff median", "half-ms", mtext="n/a")
    row("WebSocket − MPRIS for the same change, p90 (ms)", "diff p90", "half-ms", mtext="n/a")
    row(f"{o.clients} clients: daemon CPU over {o.seconds:g} s (% of one core)", "cpu %", None, 1)
    row(f"{o.clients} clients: RSS before (MiB)", "rss before", None, 1)
    row(f"{o.clients} clients: RSS during, peak (MiB)", "rss peak", None, 1)
    row(f"{o.clients} clients: change → slowest client, median (ms)", "slowest median", None, 2)
    row(f"{o.clients} clients: change → slowest client, max (ms)", "slowest max", None, 2)
    row("RSS playing, [web] enabled = false (MiB)", "rss web off", None, 1, mtext="n/a")
    row("RSS playing, [web] enabled (MiB)", "rss web on", None, 1, mtext="n/a")
    row("web face's memory cost (MiB)", "web cost", "5mib", 1, mtext="n/a")
    row("… of it anonymous memory, RssAnon (MiB)", "web cost anon", None, 1, mtext="n/a")
    row("… of it the binary's and libraries' pages, RssFile (MiB)", "web cost file", None, 1, mtext="n/a")
    row("page bytes: / (index.html)", "bytes /", None, 0, mtext=(str(m["page bytes"]) + " (its /mopidy/ index, not a player page)") if m and "page bytes" in m else "n/a")
    row("page bytes: /app.js", "bytes /app.js", None, 0, mtext="n/a")
    row("page bytes: /style.css", "bytes /style.css", None, 0, mtext="n/a")
    row("page bytes: the three together", "bytes total", None, 0, mtext="n/a")
    row("first load: the three over the wire, headers included (bytes)", "wire three files", None, 0, mtext="n/a")
    row("first load: navigation start → title shown (ms)", "title shown ms", None, 1, mtext="n/a")
    row("first load: navigation start → DOMContentLoaded (ms)", "dcl ms", None, 1, mtext="n/a")
    key_of = {label: key for label, key in row_keys}
    lines = ["| metric (lower is better) | tonearm | mopidy | tonearm ÷ mopidy | goal | met? |",
             "| --- | ---: | ---: | ---: | --- | --- |"]
    verdicts = {}
    for label, tv, mv, goal, digits in rows:
        ratio = tv / mv if isinstance(tv, (int, float)) and isinstance(mv, (int, float)) and mv else None
        goal_text, met = "—", "—"
        if goal == "fifth":
            goal_text = "≤ 0.20 × Mopidy"
            met = "no peer" if ratio is None else ("met" if ratio <= 0.2 else "not met")
            key = key_of.get(label, "")
            floor, nio = t.get("floor " + key), t.get("nio floor " + key)
            if met == "not met" and floor is not None and 0.2 * mv < floor:
                met = f"not met; the goal ({0.2 * mv:.3f}) is below this machine's floor"
            elif met == "not met" and nio is not None and 0.2 * mv < nio:
                met = f"not met; the goal ({0.2 * mv:.3f}) is below SwiftNIO's own floor"
        elif goal == "half-ms":
            goal_text = "≤ 0.5 ms"
            met = "—" if tv is None else ("met" if tv <= 0.5 else "not met")
        elif goal == "5mib":
            goal_text = "≤ 5 MiB"
            met = "—" if tv is None else ("met" if tv <= 5 else "not met")
        verdicts[label] = met
        lines.append(f"| {label} | {fmt(tv, digits)} | {fmt(mv, digits)} | {fmt(ratio, 2) if ratio is not None else '—'} "
                     f"| {goal_text} | {met} |")
    return "\n".join(lines), verdicts


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--tonearmd", default=os.path.join(REPO, ".build/release/tonearmd"))
    a.add_argument("--calls", type=int, default=1000, help="state reads per kind (default 1000)")
    a.add_argument("--rounds", type=int, default=5, help="rounds the state reads and toggles are split in, each taking "
                                                          "every server in turn (default 5)")
    a.add_argument("--toggles", type=int, default=50, help="pause/play toggles (default 50)")
    a.add_argument("--clients", type=int, default=100, help="WebSocket clients following (default 100)")
    a.add_argument("--seconds", type=float, default=20, help="seconds of following, a change each 0.5 s (default 20)")
    a.add_argument("--page-loads", type=int, default=3, help="first loads in a fresh browser (default 3; median)")
    a.add_argument("--memory-runs", type=int, default=2, help="sessions with [web] off and on each (default 2; median)")
    a.add_argument("--skip-mopidy", action="store_true")
    a.add_argument("--json", help="also write the figures to this file")
    a.add_argument("--deadline", type=int, default=1800, help="give up after this many seconds (default 1800)")
    o = a.parse_args()
    if not os.access(o.tonearmd, os.X_OK):
        a.error(f"no tonearmd at {o.tonearmd} (build it, or give --tonearmd PATH)")
    o.tonearmd = os.path.abspath(o.tonearmd)

    def give_up(signum, _):
        raise TimeoutError(f"the benchmark took longer than {o.deadline} s") if signum == signal.SIGALRM else SystemExit(128 + signum)
    signal.signal(signal.SIGALRM, give_up)
    signal.signal(signal.SIGTERM, give_up)
    signal.signal(signal.SIGINT, signal.default_int_handler)   # even when started with SIGINT ignored (`cmd &`)
    signal.alarm(o.deadline)

    home = tempfile.mkdtemp(prefix="web-face-bench-")
    results = {"tonearm": {}, "versions": versions(o), "options": vars(o)}
    try:
        print("web-face: generating media", file=sys.stderr)
        media = make_media(home)
        print("web-face: tonearm memory with [web] off and on", file=sys.stderr)
        results["tonearm"].update(measure_memory(o, home, media, o.memory_runs))

        p, address, port = start_tonearm(o.tonearmd, os.path.join(home, "tonearm"), media)
        t = Tonearm(port)
        status, _, body = http_once(port, "PUT", "/api/v1/player/loop", {"loop": "Track"})
        if status != 200:
            raise RuntimeError(f"PUT /api/v1/player/loop answered {status}: {body[:200]!r}")
        wait_for("tonearmd playing 2 s", lambda: t.playing_at(2), 120, 0.05)
        if t.state_of()["track"]["title"] != TITLE:
            raise RuntimeError(f"tonearmd reads the title as {t.state_of()['track']['title']!r}, not {TITLE!r}")

        # Mopidy plays beside tonearm from here on, so that the timed phases can take them in turn.
        m = mp = None
        if o.skip_mopidy:
            results["mopidy note"] = "skipped"
        elif not shutil.which("mopidy"):
            results["mopidy note"] = "not installed"
        else:
            try:
                mport = free_port()
                mp, m = start_mopidy(os.path.join(home, "mopidy"), media, mport)
                wait_for("Mopidy playing 2 s", lambda: m.playing_at(2), 120, 0.05)
                results["mopidy"] = {}
            except (RuntimeError, TimeoutError, OSError, ValueError) as e:
                print(f"web-face: mopidy failed to start: {e!r}", file=sys.stderr)
                results["mopidy note"] = f"failed: {str(e)[:80]}"
                if mp: stop(mp)
                m = mp = None

        measure_interleaved(o, t, m, results, address)
        if m and not any(k.startswith("ws ") for k in results["mopidy"]):
            results["mopidy note"] = "failed: its toggles"

        players = [t] + ([m] if m else [])
        print(f"web-face: tonearm: {o.clients} WebSocket clients for {o.seconds} s", file=sys.stderr)
        hold(players, t)
        results["tonearm"].update(asyncio.run(many_clients(t, p.pid, o.clients, o.seconds)))
        if m:
            try:
                print(f"web-face: mopidy: {o.clients} WebSocket clients for {o.seconds} s", file=sys.stderr)
                hold(players, m)
                results["mopidy"].update(asyncio.run(many_clients(m, mp.pid, o.clients, o.seconds)))
                status, h, body = http_once(m.port, "GET", "/mopidy/")
                results["mopidy"]["page bytes"] = int(h.get("content-length", len(body)))
                results["mopidy"]["rss after all"] = rss_mib(mp.pid)
            except (RuntimeError, TimeoutError, OSError, ValueError) as e:
                print(f"web-face: mopidy failed: {e!r}", file=sys.stderr)
            stop(mp)
            hold([t], t)

        print("web-face: tonearm: the page's first load", file=sys.stderr)
        env = session_env(os.path.join(home, "browser"))
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        try:
            results["tonearm"].update(page_load(port, os.path.join(home, "browser"), o.page_loads, env))
        except Exception as e:
            print(f"web-face: the page load failed: {e!r}", file=sys.stderr)
            results["tonearm"]["page failed"] = str(e)[:200]
        results["tonearm"]["rss after all"] = rss_mib(p.pid)
        stop(p)
        stop_all_buses()
    finally:
        signal.alarm(0)
        stop_all()
        end_processes_naming(home, timeout=5)
        remove_tree(home)

    table, verdicts = report(results, o)
    results["verdicts"] = verdicts
    t = results["tonearm"]
    print(table)
    print()
    v = results["versions"]
    print(f"tonearm {v['tonearm']} ({v['tonearmd']}); {v['mopidy']}; {v['chromium']}; websockets {v['websockets']}, "
          f"selenium {v['selenium']}.")
    print(f"- {o.calls} calls per kind, {o.toggles} toggles, in {o.rounds} rounds taking each server in turn, {o.clients} clients × {o.seconds:g} s, "
          f"{o.page_loads} first loads, {o.memory_runs} memory sessions per setting.")
    print(f"- MPRIS timed by dbus-monitor's own receive time; timed when its line was read here instead: "
          f"PropertiesChanged {fmt(t.get('mpris read median'))} ms, WS − MPRIS median {fmt(t.get('diff read median'))} ms, "
          f"p90 {fmt(t.get('diff read p90'))} ms.")
    missing = [f"{n}: {r.get('ws missing', 0)} WS frames and {r.get('mpris missing', 0)} signals missed of {o.toggles}; "
               f"{r.get('changes missing a client', 0)} of {r.get('changes', 0)} volume changes missed by some client, "
               f"{r.get('clients closed early', 0)} clients closed early"
               for n, r in (("tonearm", t), ("mopidy", results.get("mopidy") or {})) if r]
    print("- " + "; ".join(missing) + ".")
    print("- frames (bytes) each client got while following: " + "; ".join(
        f"{n} {fmt(r.get('frames per client'), 0)} ({fmt(r.get('bytes per client'), 0)})"
        for n, r in (("tonearm", t), ("mopidy", results.get("mopidy") or {})) if r.get("frames per client") is not None) + ".")
    print(f"- RSS [web] off / on per session (MiB): {t.get('rss off all')} / {t.get('rss on all')}; tonearmd after all "
          f"the web phases {fmt(t.get('rss after all'), 1)} MiB"
          + (f", mopidy {fmt(results['mopidy'].get('rss after all'), 1)} MiB." if results.get("mopidy") else "."))
    print(f"- first load: by the time the title showed, {fmt(t.get('requests'), 0)} requests and "
          f"{fmt(t.get('wire all requests'), 0)} bytes over the wire (the API calls included, the WebSocket not); title shown at {t.get('title shown all')} ms, "
          f"painted (next frame) {fmt(t.get('title frame ms'), 1)} ms; load event {fmt(t.get('load ms'), 1)} ms.")
    if o.json:
        with open(o.json, "w") as f:
            json.dump(results, f, indent=2, default=str)


if __name__ == "__main__":
    ensure_venv()
    main()
