"""What the Python benchmarks share: talking MPD over a socket, a private session bus and home for tonearmd, CPU time
of a process, test tones."""
import math, os, socket, struct, subprocess, time, wave


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def connect(port, timeout=120):
    """An MPD protocol connection (socket, file) once the server greets; retried until `timeout`."""
    deadline = time.time() + timeout
    while True:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=600)
            f = s.makefile("rwb")
            if f.readline().startswith(b"OK MPD"):
                return s, f
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.1)


def command(f, line):
    """Sends one MPD command; returns (lines, the closing OK or ACK line)."""
    f.write(line.encode() + b"\n"); f.flush()
    out = []
    while True:
        l = f.readline()
        if not l or l == b"OK\n" or l.startswith(b"ACK"):
            return out, l
        out.append(l)


def env_for(home, bus):
    """tonearmd's environment: every XDG folder under `home`, the private bus."""
    return dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, "config"), XDG_DATA_HOME=os.path.join(home, "data"),
                XDG_STATE_HOME=os.path.join(home, "state"), XDG_CACHE_HOME=os.path.join(home, "cache"),
                DBUS_SESSION_BUS_ADDRESS=bus)


def start_bus():
    """A private session bus: (process, address)."""
    p = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    return p, p.stdout.readline().decode().strip()


def cpu_of(pid):
    """User + system CPU seconds a process has used."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sine(path, seconds, frequency, rate=44100, channels=2, amplitude=0.3):
    """A 16-bit WAV of a sine of `frequency` Hz."""
    w = wave.open(path, "w"); w.setnchannels(channels); w.setsampwidth(2); w.setframerate(rate)
    frames = bytearray()
    for i in range(int(rate * seconds)):
        v = struct.pack("<h", int(32767 * amplitude * math.sin(2 * math.pi * frequency * i / rate)))
        frames += v * channels
    w.writeframes(bytes(frames)); w.close()
