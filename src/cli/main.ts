#!/usr/bin/env node
import { runCli } from './program.js';

/** The `tenure` bin: the program (./program.ts) on this process's argv, environment and streams. */
process.exitCode = await runCli(process.argv);
