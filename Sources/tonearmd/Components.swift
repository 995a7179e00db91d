import DBus
import Foundation
import LocalLibrary
import Logging
import MIDI
import MPDProtocol
import MPRIS
import Playback
import ReceivedShares
import Scrobble
import LocalSend
import Streams
import UPnP
import TonearmCore
import Web

/// Everything the daemon runs, built from the settings before any of it starts; `Tonearmd.serve()` lists them as
/// services in the order they start.
struct Components {
    let player: Player
    /// Builds the audio engine the player answers without until it is ready.
    let engine: EngineService
    /// The state file as the last run left it (its queue is restored by the bus face).
    let saved: PersistedState?
    let midi: MIDISource
    let shares: ReceivedShares
    let localSend: LocalSend
    let library: LocalLibrary
    /// The D-Bus face (MPRIS and org.tonearm.*), exported at once; its calls stay held until the bus face's turn.
    let face: MPRISService
    let mpd: MPDServer?
    let web: WebFace?
    /// The UPnP media renderer, when `[plugins.upnp]` enables it.
    let upnp: UPnPRenderer?
    /// The scrobbler, when `[plugins.scrobble]` enables it; it follows the player from here on.
    let scrobbler: Scrobbler?
    private let settings: Configuration
    private let dirs: XDGDirectories
    private let media: GStreamerMedia

    /// Builds the components.
    init(settings: Configuration, plugins: PluginSettings, dirs: XDGDirectories, sinkFromCommandLine: Bool,
         connection: DBusConnection, shutdown: Shutdown, logger: Logger) throws {
        self.settings = settings
        self.dirs = dirs
        let (midiSettings, streamsSettings, sharesSettings) = (plugins.midi, plugins.streams, plugins.shares)
        let (localSendSettings, librarySettings) = (plugins.localSend, plugins.library)
        let streams = StreamsSource(settings: streamsSettings)
        midi = MIDISource(settings: midiSettings, resumeFile: dirs.stateHome.appendingPathComponent("tonearm/midi.json"),
                          renditionFolder: dirs.cacheHome.appendingPathComponent("tonearm/midi"))

        let elementSettings = midi.elementSettings.merging(streamsSettings.elementSettings) { $0.merging($1) { a, _ in a } }
        // The saved state is read first: the output last switched to live is where audio starts.
        let store = StateStore(url: dirs.stateFile)
        do { saved = try store.load() } catch {
            logger.warning("\(error)")
            saved = nil
        }
        // The command line's --audio-sink plays first; else the output switched to live, else the config's `output`,
        // else its audio-sink ("default").
        let outputs = settings.outputs.all(audioSink: settings.audioSink)
        let startOutput = settings.outputs.startOutput(audioSink: settings.audioSink, sinkFromCommandLine: sinkFromCommandLine,
                                                       saved: saved?.output)
        // The player answers from the first call on through the deferred engine; the real one is attached when
        // GStreamer is ready, and what was asked meanwhile is carried out then.
        let deferred = DeferredEngine(output: startOutput)
        engine = EngineService(deferred: deferred, output: startOutput, elementSettings: elementSettings, shutdown: shutdown,
                               logger: logger)
        let artCache = ArtCache(folder: dirs.artCache)
        media = GStreamerMedia(loudnessWorker: Tonearmd.executablePath)
        // Its index opens in `IndexCheck`'s turn, which stops the daemon before the sources start if it cannot.
        library = LocalLibrary(folders: librarySettings.folders,
                               excluding: sharesSettings.inboxes + [sharesSettings.rejected], database: dirs.dataFolder.appendingPathComponent("library.sqlite"),
                               artCache: artCache, logger: Logger(label: "tonearm.library"))
        let library = library
        // One store of saved playlists for every face (MPRIS Playlists and the CLI, and MPD's stored playlists), and
        // what a queue continues from.
        let playlists = PlaylistCatalog(saved: SavedPlaylists(folder: dirs.dataFolder.appendingPathComponent("playlists"),
                                                              musicFolders: librarySettings.folders,
                                                              maximumEntries: streamsSettings.playlistMaxEntries),
                                        library: library, logger: Logger(label: "tonearm.playlists"))
        // MIDI first (it knows MIDI files by content, wherever they are); then the library, which answers for files
        // in the music folders with indexed tags and art; then any other file; network streams and playlists apart.
        player = Player(engine: deferred, plugins: [midi, library, FileSource(artCache: artCache) { await library.enrich($0) }, streams],
                        stateStore: store, artCache: artCache, tickInterval: settings.tickInterval,
                        lyricsFinder: LyricsSources.finder(midi: midi), replayGain: settings.replayGain, equalizer: settings.equalizer,
                        crossfade: settings.crossfade,
                        reconnectPolicy: streamsSettings.reconnect, outputs: outputs, outputRecovery: settings.outputs.recovery,
                        configuredOutput: settings.outputs.start, history: librarySettings.history ? library : nil, continuation: playlists)
        shares = ReceivedShares(settings: sharesSettings, artCache: artCache, media: media,
                                logger: Logger(label: "tonearm.shares")) { file in
            await library.index(file)
        }
        localSend = LocalSend(settings: localSendSettings, shares: shares)
        // Exported now (calls stay held) and subscribed to the library's events before the library starts.
        let waveforms = WaveformService(media: media, folder: dirs.waveformCache)
        let web = settings.web.enabled
            ? WebFace(settings: settings.web, player: player, library: library, shares: shares, playlists: playlists,
                      waveforms: waveforms, artFolder: dirs.artCache, logger: Logger(label: "tonearm.web")) : nil
        self.web = web
        face = MPRISService(connection: connection, player: player, media: media, library: library,
                            browsables: [library, midi], shares: shares, waveforms: waveforms,
                            playlists: playlists, webAddress: { web?.address }) {
            shutdown.request()
        }
        let decoders = media
        upnp = plugins.upnp.enabled
            ? UPnPRenderer(settings: plugins.upnp, player: player, mimeTypes: { decoders.supportedMimeTypes() },
                           storageFolder: dirs.dataFolder.appendingPathComponent("upnp"), logger: Logger(label: "tonearm.upnp")) : nil
        scrobbler = plugins.scrobble.enabled
            ? Scrobbler(settings: plugins.scrobble, events: player.events, storageFolder: dirs.dataFolder.appendingPathComponent("scrobble"),
                        logger: Logger(label: "tonearm.scrobble")) : nil
        // The MPD face follows the player from now on (its playlist version counts the restore too).
        mpd = settings.mpdProtocol.enabled
            ? MPDServer(settings: settings.mpdProtocol, player: player, library: library,
                        playlists: playlists) : nil
    }

    /// What a plugin is given when it starts: its `[plugins.NAME]` section, its storage folder and its log.
    func context(for plugin: any SourcePlugin) -> PluginContext {
        PluginContext(pluginName: plugin.name, config: settings.pluginSections[plugin.name] ?? [:],
                      storageFolder: dirs.dataFolder.appendingPathComponent(plugin.name),
                      logger: Logger(label: "tonearm.\(plugin.name)"), player: player, media: media)
    }
}
