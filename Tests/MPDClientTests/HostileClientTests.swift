import DaemonHarness
import Foundation
import TestSupport
import Testing

/// Bad clients get errors or are dropped; the player keeps playing and other clients keep being answered.
@Suite(.serialized) struct HostileClientTests {
    @Test func badClientsNeverStallThePlayerOrOthers() async throws {
        let m = try MPDDaemon(seconds: 120)
        try await m.start()
        try await m.mpc("add", "Album")
        try await m.mpc("play")
        try await m.d.waitFor("Playing") { try await m.d.status() == "Playing" }

        // Every abuse at once, each on its own connection, while 200 clients sit in idle; then a well-behaved client
        // (python-mpd2) and MPRIS must still be answered, and the idle clients must all wake on one change.
        let out = try await m.python("""
        def conn():
            s = socket.create_connection(('127.0.0.1', PORT)); s.settimeout(30)
            f = s.makefile('rwb'); assert f.readline().startswith(b'OK MPD'); return s, f
        def closed(f):
            try:
                return f.read() is not None
            except OSError:
                return True
        idlers = []
        for i in range(200):
            s, f = conn(); f.write(b'idle player\\n'); f.flush(); idlers.append((s, f))
        # 1 MB line without a newline, then one with: dropped with an ACK.
        s, f = conn(); f.write(b'a' * (1 << 20)); f.flush()
        print('long', f.readline().decode().split('}')[0] + '}', closed(f))
        # Binary garbage with newlines: errors, the connection stays usable.
        s, f = conn(); f.write(bytes(range(256)) * 4 + b'\\nping\\n'); f.flush()
        replies = []
        while True:
            line = f.readline()
            replies.append(line)
            if line == b'OK\\n' or not line: break
        print('garbage', any(r.startswith(b'ACK') for r in replies), replies[-1] == b'OK\\n')
        # Half a command, then silence: nothing happens to anyone.
        half, hf = conn(); half.sendall(b'stat')
        # A command list cut off in the middle by a disconnect.
        s, f = conn(); f.write(b'command_list_begin\\nadd Album/One.wav\\nclear\\n'); f.flush(); s.close()
        # A client that asks for a lot and never reads.
        slow, sf = conn(); slow.sendall(b'listallinfo\\n' * 2000)
        # An idle client that sends another command: dropped, as mpd does.
        s, f = conn(); f.write(b'idle\\nstatus\\n'); f.flush()
        print('idle-violation', closed(f))
        # The well-behaved client is answered and the queue is intact.
        st = client.status()
        print('status', st['state'], st['playlistlength'])
        client.pause(1)
        woke = 0
        for s, f in idlers:
            if f.readline() == b'changed: player\\n' and f.readline() == b'OK\\n': woke += 1
        print('idlers woke', woke)
        half.sendall(b'us\\n'); print('half', hf.readline().decode().strip().split(':')[0])
        """)
        let lines = out.components(separatedBy: "\n")
        try #require(lines.count == 6, "\(out)\n\(m.d.log.suffix(2000))")
        #expect(lines[0] == "long ACK [2@0] {} True")
        #expect(lines[1] == "garbage True True")
        #expect(lines[2] == "idle-violation True")
        #expect(lines[3] == "status play 3", "the cut-off command list did nothing")
        #expect(lines[4] == "idlers woke 200")
        #expect(lines[5] == "half volume")
        try await m.d.waitFor("Paused over MPRIS") { try await m.d.status() == "Paused" }
        // The player still answers at once over D-Bus, and mpc still works.
        #expect(try await m.mpc("status").out.contains("[paused]"))
    }

    /// Lines split anywhere, in CRLF or with blanks around them, pipelined or in a list, get the same answers: the
    /// quick answer of a lone `status` or `ping` and the general path agree byte for byte.
    @Test func linesInAnyPiecesGetTheSameAnswers() async throws {
        let m = try MPDDaemon()
        try await m.start()
        try await m.mpc("add", "Album")
        let out = try await m.python("""
        s = socket.create_connection(('127.0.0.1', PORT)); s.settimeout(30)
        f = s.makefile('rb'); assert f.readline().startswith(b'OK MPD')
        def replies(n):
            out = []
            for _ in range(n):
                lines = []
                while True:
                    line = f.readline(); lines.append(line)
                    if line.startswith(b'OK') or line.startswith(b'ACK') or not line: break
                out.append(b''.join(lines))
            return out
        request = b'status\\n sta\\tus \\r\\n\\tping\\r\\nstatus\\r\\r\\ncommand_list_begin\\nstatus\\ncommand_list_end\\nSTATUS\\nstatus x\\nping\\n'
        for b in request:
            s.sendall(bytes([b]))
        r = replies(8)
        print('status', r[0].count(b'\\n'), r[0].endswith(b'OK\\n'), b'playlistlength: 3\\n' in r[0])
        print('split', r[1].startswith(b'ACK'), r[2] == b'OK\\n')
        print('same', r[3] == r[0], r[4] == r[0])
        print('refused', r[5].startswith(b'ACK [5@0] {}'), r[6] == b'ACK [2@0] {status} wrong number of arguments for "status"\\n', r[7] == b'OK\\n')
        """)
        let lines = out.components(separatedBy: "\n").filter { !$0.isEmpty }
        #expect(lines == ["status 16 True True", "split True True", "same True True", "refused True True True"],
                "\(out)\n\(m.d.log.suffix(1500))")
    }

    @Test func silentClientsAreDroppedButIdleOnesStay() async throws {
        let m = try MPDDaemon(connectionTimeout: 2)
        try await m.start()
        try await m.mpc("add", "Album")
        // A client in idle first, then one that says nothing and one that stops half-way through a command: the two
        // quiet ones are closed after the timeout (waited for, however long a loaded machine takes); the idle one
        // outlives its own timeout, which ran out before theirs, and still wakes on a change. A third quiet one, opened
        // once they are closed, is closed a whole timeout later: by then the idle one has been quiet for two timeouts.
        let out = try await m.python("""
        client.disconnect()
        def conn():
            s = socket.create_connection(('127.0.0.1', PORT)); s.settimeout(60)
            f = s.makefile('rwb'); assert f.readline().startswith(b'OK MPD'); return s, f
        idler, idf = conn(); idf.write(b'idle player\\n'); idf.flush()
        silent, sf = conn()
        half, hf = conn(); half.sendall(b'stat')
        print('silent closed', sf.read() == b'')
        print('half closed', hf.read() == b'')
        late, lf = conn()
        print('late closed', lf.read() == b'')
        other = mpd.MPDClient(); other.timeout = 30; other.connect('127.0.0.1', PORT)
        other.play(0)
        print('idler', idf.readline().decode().strip(), idf.readline().decode().strip())
        """)
        let lines = out.components(separatedBy: "\n").filter { !$0.isEmpty }
        #expect(lines == ["silent closed True", "half closed True", "late closed True", "idler changed: player OK"], "\(out)\n\(m.d.log.suffix(1500))")
    }
}
