#include "tonearm_tag_fields.h"

#include <cctype>
#include <cstdlib>
#include <string>
#include <cstring>
#include <utility>
#include <vector>

#include <taglib/fileref.h>
#include <taglib/tfilestream.h>
#include <taglib/id3v2tag.h>
#include <taglib/mp4file.h>
#include <taglib/mp4tag.h>
#include <taglib/mpegfile.h>
#include <taglib/aifffile.h>
#include <taglib/wavfile.h>
#include <taglib/synchronizedlyricsframe.h>
#include <taglib/tpropertymap.h>

namespace {

char *copy(const TagLib::String &s) {
    return strdup(s.toCString(true));
}

// TagLib 1.13's MP4 property map leaves out iTunes freeform items (where taggers keep ReplayGain),
// so they are read and written as items under this prefix.
const TagLib::String freeform("----:com.apple.iTunes:");

TagLib::MP4::Tag *mp4Tag(TagLib::File *file) {
    auto *mp4 = dynamic_cast<TagLib::MP4::File *>(file);
    return mp4 == nullptr ? nullptr : mp4->tag();
}

// A file opened for reading its tags, read-only: opened for writing, closing it would tell every inotify watcher
// (another player's library, a sync tool) it had been written. `file()` is null when it is not audio TagLib reads.
struct ReadOnlyFile {
    TagLib::FileStream stream;
    TagLib::FileRef ref;

    ReadOnlyFile(const char *path, bool audioProperties)
        : stream(path, true), ref(stream.isOpen() ? TagLib::FileRef(&stream, audioProperties) : TagLib::FileRef()) {}
    ReadOnlyFile(const ReadOnlyFile &) = delete;

    TagLib::File *file() const {
        return ref.isNull() || ref.file() == nullptr || !ref.file()->isValid() ? nullptr : ref.file();
    }
};

// Every field of the file's tags, as (key, value) pairs in file order.
std::vector<std::pair<TagLib::String, TagLib::String>> fieldPairs(TagLib::File *file) {
    const TagLib::PropertyMap map = file->properties();
    std::vector<std::pair<TagLib::String, TagLib::String>> pairs;
    for (const auto &entry : map) {
        for (const auto &value : entry.second) pairs.emplace_back(entry.first, value);
    }
    if (auto *tag = mp4Tag(file)) {
        for (const auto &item : tag->itemMap()) {
            if (!item.first.startsWith(freeform)) continue;
            const TagLib::String key = item.first.substr(freeform.size()).upper();
            if (map.contains(key)) continue;
            for (const auto &value : item.second.toStringList()) pairs.emplace_back(key, value);
        }
    }
    return pairs;
}

// The pairs as a C array (nullptr and 0 when there are none); false when out of memory.
bool copyFields(const std::vector<std::pair<TagLib::String, TagLib::String>> &pairs, tonearm_tag_field **fields, size_t *count) {
    *fields = nullptr;
    *count = 0;
    if (pairs.empty()) return true;
    auto *out = static_cast<tonearm_tag_field *>(calloc(pairs.size(), sizeof(tonearm_tag_field)));
    if (out == nullptr) return false;
    for (size_t i = 0; i < pairs.size(); i++) {
        out[i].key = copy(pairs[i].first);
        out[i].value = copy(pairs[i].second);
    }
    *fields = out;
    *count = pairs.size();
    return true;
}

}

extern "C" int tonearm_tag_fields_read(const char *path, tonearm_tag_field **fields, size_t *count) {
    *fields = nullptr;
    *count = 0;
    try {
        const ReadOnlyFile read(path, false);
        if (read.file() == nullptr) return -1;
        return copyFields(fieldPairs(read.file()), fields, count) ? 0 : -1;
    } catch (...) {
        return -1;
    }
}

extern "C" int tonearm_tag_file_read(const char *path, tonearm_tag_file *out) {
    *out = tonearm_tag_file{};
    try {
        const ReadOnlyFile read(path, true);
        TagLib::File *file = read.file();
        if (file == nullptr) return -1;
        if (const auto *properties = file->audioProperties()) {
            out->sample_rate = properties->sampleRate();
            out->length_seconds = properties->lengthInSeconds();
        }
        if (const auto *tag = file->tag()) {
            out->title = copy(tag->title());
            out->artist = copy(tag->artist());
            out->album = copy(tag->album());
            out->genre = copy(tag->genre());
            out->year = tag->year();
            out->track = tag->track();
        }
        if (!copyFields(fieldPairs(file), &out->fields, &out->field_count)) {
            tonearm_tag_file_free(out);
            return -1;
        }
        return 0;
    } catch (...) {
        tonearm_tag_file_free(out);
        return -1;
    }
}

extern "C" void tonearm_tag_file_free(tonearm_tag_file *file) {
    free(file->title);
    free(file->artist);
    free(file->album);
    free(file->genre);
    tonearm_tag_fields_free(file->fields, file->field_count);
    *file = tonearm_tag_file{};
}

extern "C" void tonearm_tag_fields_free(tonearm_tag_field *fields, size_t count) {
    if (fields == nullptr) return;
    for (size_t i = 0; i < count; i++) {
        free(fields[i].key);
        free(fields[i].value);
    }
    free(fields);
}

extern "C" int tonearm_tag_fields_write(const char *path, const char *const *keys, const char *const *values, size_t count) {
    try {
        TagLib::FileRef ref(path, false);
        if (ref.isNull() || ref.file() == nullptr || !ref.file()->isValid()) return -1;
        TagLib::PropertyMap map = ref.file()->properties();
        for (size_t i = 0; i < count; i++) {
            const TagLib::String key(keys[i], TagLib::String::UTF8);
            const TagLib::String value(values[i], TagLib::String::UTF8);
            if (value.isEmpty()) {
                map.erase(key);
            } else {
                map.replace(key, TagLib::StringList(value));
            }
        }
        const TagLib::PropertyMap ignored = ref.file()->setProperties(map);
        if (auto *tag = mp4Tag(ref.file())) {
            for (size_t i = 0; i < count; i++) {
                const TagLib::String key(keys[i], TagLib::String::UTF8);
                const TagLib::String value(values[i], TagLib::String::UTF8);
                std::string lower = key.to8Bit(true);
                for (auto &ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
                const TagLib::String item = freeform + TagLib::String(lower, TagLib::String::UTF8);
                if (value.isEmpty()) {
                    tag->removeItem(item);
                    tag->removeItem(freeform + key);
                } else if (ignored.contains(key)) {
                    tag->setItem(item, TagLib::MP4::Item(TagLib::StringList(value)));
                }
            }
        }
        return ref.file()->save() ? 0 : -2;
    } catch (...) {
        return -2;
    }
}

/// The SYLT lines of `tag` (the first frame in milliseconds: one language is enough, the tagger's primary).
static std::vector<std::pair<unsigned int, TagLib::String>> synced_lines(TagLib::ID3v2::Tag *tag) {
    std::vector<std::pair<unsigned int, TagLib::String>> found;
    if (tag == nullptr) return found;
    for (auto *frame : tag->frameList("SYLT")) {
        auto *sylt = dynamic_cast<TagLib::ID3v2::SynchronizedLyricsFrame *>(frame);
        if (sylt == nullptr) continue;
        if (sylt->timestampFormat() != TagLib::ID3v2::SynchronizedLyricsFrame::AbsoluteMilliseconds) continue;
        for (const auto &text : sylt->synchedText()) found.emplace_back(text.time, text.text);
        break;
    }
    return found;
}

extern "C" int tonearm_tag_synced_lyrics_read(const char *path, tonearm_synced_text **lines, size_t *count) {
    *lines = nullptr;
    *count = 0;
    try {
        // Read-only, as ReadOnlyFile. SYLT is an ID3v2 frame: in front of an MPEG stream, or in a WAV's or an AIFF's
        // id3 chunk, whatever the file's name says. Only those are opened as such: TagLib looks for an ID3v2 tag in
        // anything else opened as MPEG byte by byte up to the first MPEG frame, which is the whole of a file that has
        // none (3.8 s of CPU for a three-minute WAV, 0.4 s for a FLAC of 7 MB), at every track's start.
        TagLib::FileStream stream(path, true);
        if (!stream.isOpen()) return -1;
        const TagLib::ByteVector head = stream.readBlock(12);
        stream.seek(0);
        std::vector<std::pair<unsigned int, TagLib::String>> found;
        if (head.startsWith("ID3")) {
            TagLib::MPEG::File file(&stream, TagLib::ID3v2::FrameFactory::instance(), false);
            if (!file.isValid()) return -1;
            if (file.hasID3v2Tag()) found = synced_lines(file.ID3v2Tag());
        } else if (head.size() == 12 && head.startsWith("RIFF") && head.mid(8, 4) == "WAVE") {
            TagLib::RIFF::WAV::File file(&stream, false);
            if (!file.isValid()) return -1;
            if (file.hasID3v2Tag()) found = synced_lines(file.ID3v2Tag());
        } else if (head.size() == 12 && head.startsWith("FORM") && (head.mid(8, 4) == "AIFF" || head.mid(8, 4) == "AIFC")) {
            TagLib::RIFF::AIFF::File file(&stream, false);
            if (!file.isValid()) return -1;
            if (file.hasID3v2Tag()) found = synced_lines(file.tag());
        }
        if (found.empty()) return 0;
        auto *out = static_cast<tonearm_synced_text *>(calloc(found.size(), sizeof(tonearm_synced_text)));
        if (out == nullptr) return -1;
        for (size_t i = 0; i < found.size(); i++) {
            out[i].time_ms = found[i].first;
            out[i].text = copy(found[i].second);
        }
        *lines = out;
        *count = found.size();
        return 0;
    } catch (...) {
        return -1;
    }
}

extern "C" void tonearm_tag_synced_lyrics_free(tonearm_synced_text *lines, size_t count) {
    if (lines == nullptr) return;
    for (size_t i = 0; i < count; i++) free(lines[i].text);
    free(lines);
}
