import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` turns src/store/schema.ts into a new forward-only SQL migration in drizzle/.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/schema.ts',
  out: './drizzle',
});
