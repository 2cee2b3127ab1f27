import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startServer } from './server.js';
import { DataDirLockedError } from './store/data-dir-lock.js';

/** `npm start`: serve until SIGTERM or SIGINT, then close cleanly and exit 0. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`tenure: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.log.level);
  let server;
  try {
    server = await startServer(config, logger);
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      process.stderr.write(`tenure: ${err.message}\n`);
      process.exit(1);
    }
    logger.fatal({ err }, 'tenure could not start');
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    server
      .close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

await main();
