import MPDProtocol
import Testing

private let songs = [
    MPDSong(file: "Rock/one.mp3", uri: "file:///m/Rock/one.mp3", tags: [("Artist", "The Band"), ("Title", "One"), ("Album", "First"), ("Genre", "Rock")], duration: 100),
    MPDSong(file: "Rock/two.mp3", uri: "file:///m/Rock/two.mp3", tags: [("Artist", "Other"), ("AlbumArtist", "The Band"), ("Title", "Two"), ("Album", "First")], duration: 50),
    MPDSong(file: "Jazz/three.flac", uri: "file:///m/Jazz/three.flac", tags: [("Artist", "O'Brien"), ("Title", "Three")]),
]

private func files(_ arguments: [String], search: Bool = false) throws -> [String] {
    let filter = try SongFilter.parse(arguments, oldFormContains: search)
    return songs.filter(try filter.predicate(foldCase: search)).map(\.file)
}

@Suite struct SongFilterTests {
    @Test(arguments: [
        (["(Artist == \"The Band\")"], false, ["Rock/one.mp3"]),
        (["(AlbumArtist == \"The Band\")"], false, ["Rock/one.mp3", "Rock/two.mp3"]),
        (["(artist == 'the band')"], false, [String]()),
        (["(artist == 'the band')"], true, ["Rock/one.mp3"]),
        (["(Artist != \"The Band\")"], false, ["Rock/two.mp3", "Jazz/three.flac"]),
        (["(Title contains \"o\")"], false, ["Rock/two.mp3"]),
        (["(Title starts_with \"T\")"], false, ["Rock/two.mp3", "Jazz/three.flac"]),
        (["(Title =~ \"^T.o$\")"], false, ["Rock/two.mp3"]),
        (["(Title !~ \"^T\")"], false, ["Rock/one.mp3"]),
        (["(Artist == \"O\\'Brien\")"], false, ["Jazz/three.flac"]),
        (["(!(Album == \"First\"))"], false, ["Jazz/three.flac"]),
        (["((Album == \"First\") AND (Title == \"Two\"))"], false, ["Rock/two.mp3"]),
        (["(base \"Rock\")"], false, ["Rock/one.mp3", "Rock/two.mp3"]),
        (["(file == \"Jazz/three.flac\")"], false, ["Jazz/three.flac"]),
        (["(any contains \"band\")"], true, ["Rock/one.mp3", "Rock/two.mp3"]),
        (["(Genre == \"\")"], false, ["Rock/two.mp3", "Jazz/three.flac"]),
        (["artist", "The Band"], false, ["Rock/one.mp3"]),
        (["artist", "band"], true, ["Rock/one.mp3"]),
        (["album", "First", "title", "One"], false, ["Rock/one.mp3"]),
        (["any", "three"], true, ["Jazz/three.flac"]),
    ])
    func matches(arguments: [String], search: Bool, expected: [String]) throws {
        #expect(try files(arguments, search: search) == expected)
    }

    @Test(arguments: [
        ["(Artist == \"x\""],
        ["(Bogus == \"x\")"],
        ["(Artist ?? \"x\")"],
        ["(Artist == x)"],
        ["((Artist == \"x\") OR (Title == \"y\"))"],
        ["(Title =~ \"(\")"],
        ["artist"],
        ["(Artist == \"x\") trailing"],
    ])
    func refuses(arguments: [String]) {
        #expect(throws: MPDAck.self) { try files(arguments) }
    }
}
