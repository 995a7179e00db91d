// swift-tools-version:6.0
import PackageDescription

/// The executables are linked by lld with packed relative relocations (DT_RELR, glibc 2.36): a static Swift binary
/// is position-independent and has some 180,000 pointers to relocate at start; as a 3.7 MB RELA table the loader
/// read all of it into memory at every start, packed it is 30 kB (about 2 MiB less resident, start-up unchanged).
let packedRelocations: [LinkerSetting] = [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"])]

/// No dynamic symbol table of the executables' own: swiftc's static-stdlib link exports every symbol of their objects
/// (55,000 in tonearmd), nothing looks any of them up, and the loader searched them first for every symbol of the
/// shared libraries at each start while their names and hash table (3.5 MiB) stayed resident.
let noExportedSymbols: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "--no-export-dynamic"])]

/// The daemon's release link lays out first, together, the functions a start, playback and the faces' common calls
/// run (link/tonearmd.order, written by scripts/hot-functions from callgrind). The kernel maps up to 16 pages of code
/// around each one first touched: the same 2 MiB of functions, spread over the 34 MiB of code, kept 20 MiB resident;
/// laid out together, 13 MiB. Names the order no longer finds are passed over.
let hotFunctionsFirst: [LinkerSetting] = [.unsafeFlags([
    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/link/tonearmd.order",
    "-Xlinker", "--no-warn-symbol-ordering",
], .when(configuration: .release))]

/// The daemon's constants in a read-only segment (link/constants.ld: the few writable `.rodata` inputs of the static
/// Swift libraries are set apart), so the memory trimmer can hand back their pages once used; and what a start reads
/// in one stretch of the file (the constants, the PLT, then the code a start runs), ICU's data and the unwind tables
/// after the code, so a start whose executable left the page cache reads 24 MiB of it, not 67. Valgrind 3.19's loader
/// crashes on that layout (an internal SIGSEGV before the first instruction), so scripts/hot-functions, which profiles
/// under callgrind, links without it (TONEARM_LINK_FOR_VALGRIND): which functions run does not depend on it.
let daemonLayout: [LinkerSetting] = Context.environment["TONEARM_LINK_FOR_VALGRIND"] != nil ? [] : [.unsafeFlags([
    "-Xlinker", "-T", "-Xlinker", "\(Context.packageDirectory)/link/constants.ld",
])]

let package = Package(
    name: "Tonearm",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "tonearmd", targets: ["tonearmd"]),
        .executable(name: "tonearm", targets: ["tonearm"]),
        .executable(name: "tonearm-bench", targets: ["tonearm-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", exact: "2.8.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", exact: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/apple/swift-asn1", exact: "1.7.4"),
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CGLib",
            pkgConfig: "gobject-2.0 glib-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
        // GStreamer's headers (include/gst: libgstreamer1.0-dev and libgstreamer-plugins-base1.0-dev) and a stub for
        // each function called: the libraries are opened at the first call, not at every start (scripts/gen-gst-stubs).
        .target(name: "CGStreamer", dependencies: ["CGLib"], exclude: ["symbols.txt"]),
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .systemLibrary(
            name: "CEBUR128",
            pkgConfig: "libebur128",
            providers: [.apt(["libebur128-dev"])]
        ),
        .target(name: "CTagFields", linkerSettings: [.linkedLibrary("tag")]),
        .target(name: "TagFields", dependencies: ["CTagFields"]),
        .systemLibrary(
            name: "CPNG",
            pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]
        ),
        .systemLibrary(name: "CLinux"),
        .target(name: "CCodePages"),
        .target(name: "Lyrics"),
        .target(name: "RawPaths"),
        .target(name: "LyricsFiles", dependencies: ["Lyrics", "TagFields", "RawPaths"]),
        .target(name: "XMLTree"),
        .target(name: "DBus", dependencies: ["CDBus", "CLinux", "XMLTree"]),
        .target(name: "Waveform", dependencies: ["CPNG"]),
        .target(name: "Playback", dependencies: ["CGStreamer", "CEBUR128", "CLinux", .product(name: "Logging", package: "swift-log")]),
        .target(name: "LibraryRecord"),
        .target(name: "TonearmCore", dependencies: [
            "Playback", "Waveform", "Lyrics", "CLinux", "LibraryRecord", "RawPaths",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "TOMLKit", package: "TOMLKit"),
        ]),
        .target(name: "MPRIS", dependencies: [
            "DBus", "TonearmCore", "Waveform", "Lyrics",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "MPDProtocol", dependencies: [
            "TonearmCore",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "Web", dependencies: [
            "TonearmCore",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HummingbirdTLS", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], resources: [
            .embedInCode("Page/index.html"), .embedInCode("Page/app.js"), .embedInCode("Page/style.css"),
            .embedInCode("Contract/openapi.json"),
        ]),
        .executableTarget(name: "tonearmd", dependencies: [
            "MPRIS", "MPDProtocol", "Web", "TonearmCore", "Playback", "DBus", "LocalLibrary", "MIDI", "ReceivedShares", "LocalSend", "Streams", "UPnP", "Scrobble", "Lyrics", "LyricsFiles", "RawPaths", "CCodePages",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
        ], linkerSettings: packedRelocations + noExportedSymbols + hotFunctionsFirst + daemonLayout),
        .executableTarget(name: "tonearm", dependencies: [
            "DBus", "Waveform", "LibraryRecord", "RawPaths", "CLinux",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], linkerSettings: packedRelocations + noExportedSymbols),
        .target(name: "LocalLibrary", dependencies: [
            "TonearmCore", "TagFields", "RawPaths",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "GRDBSQLite", package: "GRDB.swift"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Plugins/LocalLibrary"),
        .target(name: "MIDI", dependencies: [
            "TonearmCore", "Lyrics", "RawPaths",
            .product(name: "Logging", package: "swift-log"),
        ], path: "Plugins/MIDI"),
        .target(name: "ReceivedShares", dependencies: [
            "TonearmCore",
            .product(name: "Logging", package: "swift-log"),
        ], path: "Plugins/ReceivedShares"),
        .target(name: "LocalSend", dependencies: [
            "TonearmCore", "ReceivedShares",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HummingbirdTLS", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "X509", package: "swift-certificates"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "SwiftASN1", package: "swift-asn1"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], path: "Plugins/LocalSend"),
        .target(name: "Streams", dependencies: [
            "TonearmCore", "XMLTree",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Plugins/Streams"),
        .target(name: "UPnP", dependencies: [
            "TonearmCore", "XMLTree",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], path: "Plugins/UPnP"),
        .target(name: "Scrobble", dependencies: [
            "TonearmCore",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Plugins/Scrobble"),
        // Optimised even in debug builds: tests make and analyse millions of samples on the concurrency pool.
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: [.unsafeFlags(["-O"])]),
        .executableTarget(name: "tonearm-bench", dependencies: [
            "DBus", "TestSupport",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], path: "Benchmarks/Sources/tonearm-bench"),
        // The web benchmark's second floor: what SwiftNIO alone, under Hummingbird, costs a read.
        .executableTarget(name: "nio-answerer", dependencies: [
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ], path: "Benchmarks/Sources/nio-answerer"),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"]),
        .testTarget(name: "WaveformTests", dependencies: ["Waveform"]),
        .testTarget(name: "PlaybackTests", dependencies: ["Playback", "CGStreamer", "TestSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "TonearmCoreTests", dependencies: ["TonearmCore", "Playback", "TestSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "LocalLibraryTests", dependencies: [
            "LocalLibrary", "TonearmCore", "TestSupport", "TagFields", "RawPaths",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "XMLTreeTests", dependencies: ["XMLTree"]),
        .testTarget(name: "UPnPTests", dependencies: ["UPnP", "TonearmCore", "XMLTree"]),
        .testTarget(name: "ScrobbleTests", dependencies: ["Scrobble", "TonearmCore"]),
        .testTarget(name: "StreamsTests", dependencies: ["Streams", "TonearmCore"]),
        .testTarget(name: "MIDITests", dependencies: ["MIDI", "TonearmCore", "TestSupport", "Lyrics", "RawPaths"]),
        .testTarget(name: "LyricsTests", dependencies: ["Lyrics", "LyricsFiles", "TagFields", "RawPaths", "TestSupport"]),
        .testTarget(name: "LocalSendTests", dependencies: [
            "LocalSend", "TonearmCore", "TestSupport", .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "NIOCore", package: "swift-nio"),
        ]),
        .testTarget(name: "ReceivedSharesTests", dependencies: ["ReceivedShares", "TonearmCore", "Playback", "TestSupport"]),
        .target(name: "DaemonHarness", dependencies: ["DBus", "TestSupport"], path: "Tests/DaemonHarness"),
        // The Python rigs are run from the source tree by path, not built.
        .testTarget(name: "IntegrationTests", dependencies: ["DBus", "MPRIS", "Playback", "TestSupport", "DaemonHarness", "Waveform", "TagFields", "RawPaths", "CLinux", "CCodePages"],
                    exclude: ["scrobble/switchboard.py", "upnp/controlpoint.py"]),
        .testTarget(name: "MPDProtocolTests", dependencies: ["MPDProtocol", "TonearmCore"]),
        .testTarget(name: "MPDClientTests", dependencies: ["DBus", "TestSupport", "DaemonHarness", "TagFields"]),
        .testTarget(name: "WebTests", dependencies: [
            "Web", "TonearmCore", "Playback", "DBus", "TestSupport", "DaemonHarness",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], exclude: ["browser/page_check.py"]),
        .testTarget(name: "ReliabilityTests", dependencies: ["DBus", "TestSupport", "DaemonHarness"]),
    ],
    swiftLanguageModes: [.v6]
)

/// Concrete types are reached through their metadata accessors, not through mangled names the runtime demangles:
/// instantiating `Set<String>` from its name made the runtime look `String: Hashable` up among the binary's 11,700
/// conformances, one scan per such type, about 2.7 ms of a daemon's start in all (perf, 40 starts).
for target in package.targets where target.type == .regular || target.type == .executable {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"], .when(configuration: .release)),
    ]
}
