/// Names that browsers, file managers and transfer tools give files still being written.
enum PartialNames {
    static let suffixes = [".part", ".partial", ".crdownload", ".download", ".tmp", ".temp", ".filepart", ".!qb", ".opdownload"]

    /// Hidden names (`.goutputstream-…`, `.name.XXXX`), backups ending in `~`, and download suffixes.
    static func isPartial(_ name: String) -> Bool {
        if name.hasPrefix(".") || name.hasSuffix("~") { return true }
        let lower = name.lowercased()
        return suffixes.contains { lower.hasSuffix($0) }
    }
}
