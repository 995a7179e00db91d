/// The pipeline's own state as the engine reports it (transient seek states filtered out).
public enum PlaybackState: Sendable, Equatable {
    case stopped, paused, playing
}
