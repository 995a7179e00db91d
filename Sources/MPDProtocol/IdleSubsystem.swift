/// The parts of the daemon `idle` waits on, under mpd's names.
public enum IdleSubsystem: String, Sendable, CaseIterable, Hashable {
    case database, update
    case storedPlaylist = "stored_playlist"
    case playlist, player, mixer, output, options, partition, sticker, subscription, message, neighbor, mount
}
