import DaemonHarness
import DBus
import Foundation
import TestSupport
import Testing

/// python-mpd2, the library most MPD scripts and web clients use: command lists, idle, binary album art, errors,
/// the password gate and the Unix socket.
@Suite(.serialized) struct PythonClientTests {
    @Test func commandListsAndErrors() async throws {
        let m = try MPDDaemon()
        try await m.start()
        let out = try await m.python("""
        client.command_list_ok_begin()
        client.add('Album/One.wav')
        client.add('Album/Two.wav')
        client.status()
        results = client.command_list_end()
        print('list', len(results), results[2]['playlistlength'])
        try:
            client.command_list_ok_begin()
            client.add('Album/Three.wav')
            client.add('Album/Nothing.wav')
            client.add('Album/One.wav')
            client.command_list_end()
        except mpd.CommandError as e:
            print('ack', e)
        print('length', client.status()['playlistlength'])
        for bad in [lambda: client.play(9), lambda: client.deleteid(999), lambda: client.setvol(101),
                    lambda: client.consume(1), lambda: client.load('nope')]:
            try:
                bad()
                print('no error')
            except mpd.CommandError as e:
                print('ack', e)
        raw = socket.create_connection(('127.0.0.1', PORT)).makefile('rwb')
        raw.readline()
        raw.write(b'frobnicate\\n'); raw.flush()
        print('ack', raw.readline().decode().strip()[4:])
        v1 = int(client.status()['playlist'])
        client.moveid(int(client.playlistinfo()[0]['id']), 2)
        changes = client.plchangesposid(v1)
        print('changes', sorted(int(c['cpos']) for c in changes))
        print('version grew', int(client.status()['playlist']) > v1)
        """)
        let lines = out.components(separatedBy: "\n")
        try #require(lines.count == 11, "\(out)")
        #expect(lines[0] == "list 3 2")
        #expect(lines[1] == "ack [50@1] {add} No such directory", "the failing command's place in the list")
        #expect(lines[2] == "length 3", "commands before the failing one ran, those after it did not")
        #expect(lines[3] == "ack [2@0] {play} Bad song index")
        #expect(lines[4] == "ack [50@0] {deleteid} No such song")
        #expect(lines[5] == "ack [2@0] {setvol} Invalid volume value")
        #expect(lines[6].hasPrefix("ack [5@0] {consume}"))
        #expect(lines[7].hasPrefix("ack [50@0] {load} No such playlist"))
        #expect(lines[8] == "ack [5@0] {} unknown command \"frobnicate\"")
        #expect(lines[9] == "changes [0, 1, 2]")
        #expect(lines[10] == "version grew True")
    }

    @Test func replayGainModeIsTonearmsOwn() async throws {
        let m = try MPDDaemon()
        try await m.start()
        let options = try await SignalRecorder(m.d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let out = try await m.python("""
        print('status', client.replay_gain_status())
        client.replay_gain_mode('album')
        print('status', client.replay_gain_status())
        try:
            client.replay_gain_mode('loud')
        except mpd.CommandError as e:
            print('ack', e)
        """)
        #expect(out.components(separatedBy: "\n").filter { !$0.isEmpty } == [
            "status off", "status album", "ack [2@0] {replay_gain_mode} Unrecognized replay gain mode",
        ])
        try await m.d.waitFor("the mode over D-Bus") { try await m.d.get(Daemon.tonearm, "ReplayGainMode") == .string("album") }
        try await m.d.waitFor("PropertiesChanged for it") {
            options.named("PropertiesChanged").contains { $0.arguments.count > 1 && $0.arguments[1].vardictValue?["ReplayGainMode"] != nil }
        }
        // And the other way: a mode set over D-Bus is what mpd clients read.
        try await m.d.set(Daemon.tonearm, "ReplayGainMode", .string("track"))
        #expect(try await m.python("print(client.replay_gain_status())").trimmingCharacters(in: .whitespacesAndNewlines) == "track")
    }

    @Test func storedPlaylistsAreTonearmsSavedPlaylists() async throws {
        let m = try MPDDaemon()
        try await m.start()
        let out = try await m.python("""
        watcher = socket.create_connection(('127.0.0.1', PORT)).makefile('rwb'); watcher.readline()
        watcher.write(b'idle stored_playlist\\n'); watcher.flush()
        client.add('Album/One.wav'); client.add('Album/Two.wav')
        client.save('Mix')
        print('woke', watcher.readline().decode().strip(), watcher.readline().decode().strip())
        for bad in [lambda: client.save('Mix'), lambda: client.listplaylist('Nope'), lambda: client.rm('Nope'),
                    lambda: client.save('Other', 'append')]:
            try:
                bad()
                print('no error')
            except mpd.CommandError as e:
                print('ack', e)
        print('list', [p['playlist'] for p in client.listplaylists()])
        print('files', client.listplaylist('Mix'))
        print('info', [s['file'] for s in client.listplaylistinfo('Mix')])
        client.playlistadd('Mix', 'Album/Three.wav')
        client.playlistmove('Mix', 2, 0)
        client.playlistdelete('Mix', 1)
        print('edited', client.listplaylist('Mix'))
        client.rename('Mix', 'Road')
        client.clear(); client.load('Road')
        print('queue', [s['file'] for s in client.playlistinfo()])
        client.save('Road', 'append')
        print('appended', len(client.listplaylist('Road')))
        print('modified', [p['last-modified'] for p in client.listplaylists()])
        """)
        let lines = out.components(separatedBy: "\n").filter { !$0.isEmpty }
        try #require(lines.count == 12, "\(out)")
        #expect(lines[0] == "woke changed: stored_playlist OK")
        #expect(lines[1] == "ack [56@0] {save} Playlist already exists")
        #expect(lines[2] == "ack [50@0] {listplaylist} No such playlist")
        #expect(lines[3] == "ack [50@0] {rm} No such playlist")
        #expect(lines[4] == "ack [50@0] {save} No such playlist")
        #expect(lines[5] == "list ['Mix']")
        #expect(lines[6] == "files ['Album/One.wav', 'Album/Two.wav']")
        #expect(lines[7] == "info ['Album/One.wav', 'Album/Two.wav']")
        #expect(lines[8] == "edited ['Album/Three.wav', 'Album/Two.wav']")
        #expect(lines[9] == "queue ['Album/Three.wav', 'Album/Two.wav']")
        #expect(lines[10] == "appended 4")
        #expect(lines[11].wholeMatch(of: /modified \['\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ'\]/) != nil, "mpd's form: \(lines[11])")
        // The same playlist for the other faces: the file Tonearm saves, and `tonearm playlist`.
        let saved = m.d.home.file("data/tonearm/playlists/Road.m3u8")
        #expect(FileManager.default.fileExists(atPath: saved.path))
        #expect(!FileManager.default.fileExists(atPath: m.d.home.file("data/tonearm/playlists/Mix.m3u8").path), "renamed, not copied")
        #expect(try await m.d.tonearm("playlist", "list").out.contains("Road"))
        _ = try await m.python("client.rm('Road')")
        #expect(!FileManager.default.fileExists(atPath: saved.path))
    }

    @Test func idleAndNoidle() async throws {
        let m = try MPDDaemon()
        try await m.start()
        // A second client changes the volume until the first one's idle has answered.
        let out = try await m.python("""
        import threading
        other = mpd.MPDClient(); other.connect('127.0.0.1', PORT)
        done = threading.Event()
        def poke():
            v = 10
            while not done.is_set():
                v = 30 - v
                other.setvol(v)
                # The other client's pace, not a wait: a change now and then until one lands after the idle began.
                time.sleep(0.2)
        t = threading.Thread(target=poke); t.start()
        print('idle', client.idle('mixer'))
        done.set(); t.join()
        raw = socket.create_connection(('127.0.0.1', PORT)).makefile('rwb')
        raw.readline()
        raw.write(b'idle\\nnoidle\\nping\\n'); raw.flush()
        print('noidle', raw.readline().decode().strip(), raw.readline().decode().strip())
        print('status after', 'volume' in client.status())
        """)
        #expect(out.components(separatedBy: "\n") == ["idle ['mixer']", "noidle OK OK", "status after True"])
    }

    @Test func albumArtInBinaryChunks() async throws {
        let m = try MPDDaemon()
        try await m.start()
        let out = try await m.python("""
        art = client.albumart('Album/One.wav')
        data = art['binary']
        print('size', len(data))
        print('same', data == open(os.path.join(os.environ['HOME'], 'Music/Album/cover.jpg'), 'rb').read())
        raw = client.readpicture('Album/One.wav')
        print('readpicture', raw.get('type'), raw.get('size'), len(raw.get('binary', b'')))
        try:
            client.albumart('Album/Nope.wav')
        except mpd.CommandError as e:
            print('ack', e)
        raw = socket.create_connection(('127.0.0.1', PORT)).makefile('rwb')
        raw.readline()
        raw.write(b'binarylimit 4096\\nalbumart Album/One.wav 0\\n'); raw.flush()
        print('limit', raw.readline().decode().strip(), raw.readline().decode().strip(), raw.readline().decode().strip())
        """)
        let lines = out.components(separatedBy: "\n")
        try #require(lines.count == 5, "\(out)")
        #expect(lines[0] == "size \(MPDDaemon.coverBytes.count)")
        #expect(lines[1] == "same True", "python-mpd2 put the 8192-byte chunks together into the whole file")
        #expect(lines[2] == "readpicture image/jpeg None \(MPDDaemon.coverBytes.count)", "python-mpd2 keeps the type and joins the chunks")
        #expect(lines[3].hasPrefix("ack [50@0] {albumart}"))
        #expect(lines[4] == "limit OK size: \(MPDDaemon.coverBytes.count) binary: 4096")
    }

    @Test func passwordGatesEveryCommandButPasswordPingClose() async throws {
        let m = try MPDDaemon(password: "sesame")
        try await m.start(songs: nil)  // mpc without the password sees nothing: stats is refused
        let out = try await m.python("""
        client.ping()
        print('ping ok')
        for call in [client.status, lambda: client.add('Album/One.wav'), client.listall]:
            try:
                call(); print('no error')
            except mpd.CommandError as e:
                print('ack', e)
        try:
            client.password('wrong')
        except mpd.CommandError as e:
            print('ack', e)
        client.password('sesame')
        print('songs', 'songs' in client.stats())
        sock = mpd.MPDClient(); sock.connect(SOCKET)
        sock.password('sesame')
        print('socket', sock.status()['state'])
        """)
        let lines = out.components(separatedBy: "\n")
        try #require(lines.count == 7, "\(out)")
        #expect(lines[0] == "ping ok")
        #expect(lines[1] == "ack [4@0] {status} you don't have permission for \"status\"")
        #expect(lines[2] == "ack [4@0] {add} you don't have permission for \"add\"")
        #expect(lines[3] == "ack [4@0] {listall} you don't have permission for \"listall\"")
        #expect(lines[4] == "ack [3@0] {password} incorrect password")
        #expect(lines[5] == "songs True")
        #expect(lines[6] == "socket stop", "the Unix socket speaks the same protocol")
    }

    @Test func libraryCommands() async throws {
        let m = try MPDDaemon()
        try await m.start()
        let out = try await m.python("""
        print('lsinfo', [e.get('directory') for e in client.lsinfo()])
        print('files', [e['file'] for e in client.lsinfo('Album')])
        print('list', [e['title'] for e in client.list('title')])
        print('count', client.count('(base "Album")')['songs'])
        client.findadd('(title == "Two")')
        client.searchadd('(title starts_with "th")', 'position', 0)
        print('queue', [s['title'] for s in client.playlistinfo()])
        print('update', client.update().isdigit())
        """)
        let lines = out.components(separatedBy: "\n")
        try #require(lines.count == 6, "\(out)")
        #expect(lines[0] == "lsinfo ['Album']")
        #expect(lines[1] == "files ['Album/One.wav', 'Album/Three.wav', 'Album/Two.wav']")
        #expect(lines[2] == "list ['One', 'Three', 'Two']")
        #expect(lines[3] == "count 3")
        #expect(lines[4] == "queue ['Three', 'Two']")
        #expect(lines[5] == "update True")
    }
}
