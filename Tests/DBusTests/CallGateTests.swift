import DBus
import Synchronization
import Testing

/// The gate by itself: what waits, what is let through, and who answers a held read.
@Suite struct CallGateTests {
    /// What the answers did, in order.
    final class Answers: Sendable {
        let threads = Mutex<[String]>([])

        /// A read of `interface` waiting at `gate`, whose answer notes `note` here; its value is what `pass` returned.
        func heldRead(_ interface: String, at gate: CallGate, noting note: String) -> Task<Bool, Never> {
            Task {
                await gate.pass(reading: interface) {
                    self.threads.withLock { $0.append(note) }
                    return true
                }
            }
        }
    }

    @Test func aHeldReadIsAnsweredByTheThreadThatLetsReadsThrough() async throws {
        let gate = CallGate(held: true)
        let answers = Answers()
        let waiting = answers.heldRead("org.example.Player", at: gate, noting: "answered")
        // The read has to be waiting before reads are let through; a gate let through first answers nothing itself.
        while gate.waiterCount < 1 { await Task.yield() }
        gate.letReads(["org.example.Player"])
        // Answered inside letReads, before it returned: no task had to run first.
        #expect(answers.threads.withLock { $0 } == ["answered"])
        #expect(await waiting.value == true, "the caller is told it has nothing left to do")
    }

    @Test func aReadOfAnotherInterfaceAndAnyOtherCallWaitForTheRelease() async throws {
        let gate = CallGate(held: true)
        let answers = Answers()
        let read = answers.heldRead("org.example.Other", at: gate, noting: "other read")
        let call = Task { await gate.pass() }
        while gate.waiterCount < 2 { await Task.yield() }
        gate.letReads(["org.example.Player"])
        #expect(answers.threads.withLock { $0 }.isEmpty)
        #expect(gate.waiterCount == 2)
        gate.release()
        // Released, not answered: both go on the usual way.
        #expect(await read.value == false)
        #expect(await call.value == false)
        #expect(answers.threads.withLock { $0 }.isEmpty)
    }

    @Test func aReadLetThroughBeforeItCameIsNotAnsweredByTheGate() async {
        let gate = CallGate(held: true)
        gate.letReads(["org.example.Player"])
        let answered = await gate.pass(reading: "org.example.Player") { true }
        #expect(answered == false, "it passes at once and the caller answers it")
        #expect(gate.letsRead("org.example.Player"))
        #expect(!gate.isOpen)
    }
}
