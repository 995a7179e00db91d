#!/usr/bin/python3
"""How soon a starting tonearmd answers: spawn → its bus name, → the answer to a Get(PlaybackStatus) sent the moment
the name appears, → the answer to a method call (Introspect) sent right after. Since 2026-11-28 reads of the player's
state are answered from the restored state while the sources still start; since 2026-11-29 every other call too (the
third figure no longer waits for the sources). Idle (fresh HOME) and with a saved queue (restored at the start).
Usage: Benchmarks/start-answer.py --tonearmd PATH [--runs N]. Needs Debian's python3-dbus (hence /usr/bin/python3)."""
import argparse, os, shutil, signal, statistics, subprocess, sys, tempfile, time
import dbus
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import env_for, sine, start_bus

NAME, PATH = "org.mpris.MediaPlayer2.tonearm", "/org/mpris/MediaPlayer2"


def one_start(tonearmd, home, address, arguments=()):
    bus = dbus.bus.BusConnection(address)
    t0 = time.perf_counter()
    p = subprocess.Popen([tonearmd, "--audio-sink", "fakesink", *arguments], env=env_for(home, address),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not bus.name_has_owner(NAME):
        if p.poll() is not None:
            raise RuntimeError("tonearmd exited")
    named = time.perf_counter()
    player = bus.get_object(NAME, PATH, introspect=False)
    status = player.Get("org.mpris.MediaPlayer2.Player", "PlaybackStatus", dbus_interface="org.freedesktop.DBus.Properties", timeout=60)
    answered = time.perf_counter()
    player.Introspect(dbus_interface="org.freedesktop.DBus.Introspectable", timeout=60)
    ready = time.perf_counter()
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)
    bus.close()
    return (named - t0) * 1000, (answered - t0) * 1000, (ready - t0) * 1000, str(status)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tonearmd", required=True)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    bus_process, address = start_bus()
    root = tempfile.mkdtemp(prefix="tonearm-start-")
    try:
        song = os.path.join(root, "song.wav")
        sine(song, 30, 440)
        rows = []
        for label, saved in (("idle, fresh HOME", False), ("saved queue restored", True)):
            home = os.path.join(root, label.split(",")[0].replace(" ", "-"))
            os.makedirs(home)
            one_start(args.tonearmd, home, address, [song] if saved else [])  # warm-up: GStreamer's registry, the state
            figures = [one_start(args.tonearmd, home, address) for _ in range(args.runs)]
            statuses = {f[3] for f in figures}
            rows.append((label, *(statistics.median(f[i] for f in figures) for i in range(3)), ", ".join(sorted(statuses))))
        print(f"{args.runs} starts each, medians (ms)\n")
        print("| start | spawn → bus name | → Get(PlaybackStatus) answered | → Introspect answered | status read |")
        print("|---|---:|---:|---:|---|")
        for label, named, answered, ready, statuses in rows:
            print(f"| {label} | {named:.1f} | {answered:.1f} | {ready:.1f} | {statuses} |")
    finally:
        bus_process.terminate()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
