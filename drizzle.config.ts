import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` turns the tables in src/store/schema/ into a new forward-only SQL migration
// in drizzle/. It reads the group files themselves: src/store/schema.ts only re-exports them.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/schema/*.ts',
  out: './drizzle',
});
