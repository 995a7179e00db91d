import NIOCore

/// Runs a task's jobs on one NIO event loop. A task started by a connection's handler with this as its executor
/// preference starts on the loop's own thread, and so do the default actors it calls (the Player) when they are
/// free (SE-0417): a quick command then wakes no thread of the concurrency pool on its way to the Player and back.
final class EventLoopTaskExecutor: TaskExecutor {
    let loop: any EventLoop

    init(_ loop: any EventLoop) { self.loop = loop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
