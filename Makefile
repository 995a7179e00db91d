# Builds, installs and removes Tonearm for one user (PREFIX=~/.local, the default) or system-wide
# (sudo make install PREFIX=/usr/local). `make install` puts in place: the two binaries, the D-Bus
# activation file (a media key or `playerctl play` starts the daemon), the systemd user unit, the
# desktop file ("Open with Tonearm"), bash/zsh/fish completions and the man pages.

PREFIX ?= $(HOME)/.local
CONFIGURATION ?= release
# The Swift runtime and Foundation linked in: about half the start-up time (no symbol lookups across a dozen
# shared libraries) and less memory per process. `make SWIFT_FLAGS=` links them dynamically.
SWIFT_FLAGS ?= --static-swift-stdlib
BINDIR = $(PREFIX)/bin
DATADIR = $(PREFIX)/share
# SKIP_BUILD=1 BUILD=DIR installs binaries already built in DIR (the tests do, from inside `swift test`).
BUILD ?= $(shell swift build -c $(CONFIGURATION) --show-bin-path)
DOCS = $(BUILD)/share

FILES = \
	$(BINDIR)/tonearmd \
	$(BINDIR)/tonearm \
	$(DATADIR)/dbus-1/services/org.mpris.MediaPlayer2.tonearm.service \
	$(DATADIR)/systemd/user/tonearmd.service \
	$(DATADIR)/applications/tonearm.desktop \
	$(DATADIR)/bash-completion/completions/tonearm \
	$(DATADIR)/zsh/site-functions/_tonearm \
	$(DATADIR)/fish/vendor_completions.d/tonearm.fish \
	$(DATADIR)/man/man1/tonearm.1 \
	$(DATADIR)/man/man1/tonearmd.1

.PHONY: all build docs install uninstall

all: build docs

build:
	scripts/install-deps
	scripts/gen-interfaces
	swift build -c $(CONFIGURATION) $(SWIFT_FLAGS) --product tonearmd
	swift build -c $(CONFIGURATION) $(SWIFT_FLAGS) --product tonearm

# Completions and man pages come from the command definitions themselves (swift-argument-parser).
docs: $(if $(SKIP_BUILD),,build)
	mkdir -p $(DOCS)/completions $(DOCS)/man
	$(BUILD)/tonearm completions bash > $(DOCS)/completions/tonearm.bash
	$(BUILD)/tonearm completions zsh > $(DOCS)/completions/_tonearm
	$(BUILD)/tonearm completions fish > $(DOCS)/completions/tonearm.fish
	$(BUILD)/tonearm manual > $(DOCS)/man/tonearm.1
	{ printf '.TH TONEARMD 1 "" "Tonearm" "User Commands"\n.SH NAME\ntonearmd \\- the Tonearm music player daemon\n.SH DESCRIPTION\n.nf\n'; \
	  COLUMNS=78 $(BUILD)/tonearmd --help | sed 's/\\/\\e/g; s/^\./\\\&./'; printf '.fi\n.SH SEE ALSO\ntonearm(1)\n'; } > $(DOCS)/man/tonearmd.1

install: docs
	install -Dm755 $(BUILD)/tonearmd $(BINDIR)/tonearmd
	install -Dm755 $(BUILD)/tonearm $(BINDIR)/tonearm
	mkdir -p $(DATADIR)/dbus-1/services $(DATADIR)/systemd/user $(DATADIR)/applications
	sed 's|@BINDIR@|$(BINDIR)|g' dbus/org.mpris.MediaPlayer2.tonearm.service > $(DATADIR)/dbus-1/services/org.mpris.MediaPlayer2.tonearm.service
	sed 's|@BINDIR@|$(BINDIR)|g' dbus/tonearmd.service > $(DATADIR)/systemd/user/tonearmd.service
	sed 's|^Exec=tonearm |Exec=$(BINDIR)/tonearm |; s|^TryExec=tonearm$$|TryExec=$(BINDIR)/tonearm|' dbus/tonearm.desktop > $(DATADIR)/applications/tonearm.desktop
	install -Dm644 $(DOCS)/completions/tonearm.bash $(DATADIR)/bash-completion/completions/tonearm
	install -Dm644 $(DOCS)/completions/_tonearm $(DATADIR)/zsh/site-functions/_tonearm
	install -Dm644 $(DOCS)/completions/tonearm.fish $(DATADIR)/fish/vendor_completions.d/tonearm.fish
	install -Dm644 $(DOCS)/man/tonearm.1 $(DATADIR)/man/man1/tonearm.1
	install -Dm644 $(DOCS)/man/tonearmd.1 $(DATADIR)/man/man1/tonearmd.1
	if command -v update-desktop-database >/dev/null; then update-desktop-database -q $(DATADIR)/applications; fi

uninstall:
	rm -f $(FILES)
	if command -v update-desktop-database >/dev/null; then update-desktop-database -q $(DATADIR)/applications; fi
