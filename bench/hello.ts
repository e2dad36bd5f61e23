/** Bare Fastify hello-world: the baseline the validate route is compared with. Listens on PORT. */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
app.get('/health', async () => ({ status: 'ok' }));

const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
console.log(`hello-world listening on ${address}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
