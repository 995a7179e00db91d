import Foundation

/// The page, built into the binary (no files to install, nothing loaded from elsewhere).
enum PageFiles {
    /// The paths the page is served at.
    static let names: Set<String> = ["/", "/index.html", "/app.js", "/style.css"]

    /// The file at `path` and its media type.
    static func file(_ path: String) -> (bytes: [UInt8], type: String)? {
        switch path {
        case "/", "/index.html": return (PackageResources.index_html, "text/html; charset=utf-8")
        case "/app.js": return (PackageResources.app_js, "text/javascript; charset=utf-8")
        case "/style.css": return (PackageResources.style_css, "text/css; charset=utf-8")
        default: return nil
        }
    }

    /// A tag that changes when the page does (for `ETag`).
    static let version: String = {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in PackageResources.index_html + PackageResources.app_js + PackageResources.style_css {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }()
}
