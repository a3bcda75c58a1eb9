import type { GrainContext } from '@granary/cluster';
import type { Empty } from '@granary/codegen/runtime';
import { CartGrain } from './gen/shop/cart.granary';
import type { AddItem, CartState, CartView } from './gen/shop/cart.granary';

/** A cart whose state the runtime keeps in Redis (declared on the kind). */
export class Cart extends CartGrain<CartState> {
  override async add(req: AddItem, ctx: GrainContext): Promise<CartView> {
    this.state.totalUnits = (
      BigInt(this.state.totalUnits) + BigInt(req.price?.units ?? '0')
    ).toString();
    this.state.items = (BigInt(this.state.items) + 1n).toString();
    this.state.lastToken = req.stamp?.token ?? new Uint8Array();
    this.state.skus.push(req.sku);
    if (req.price !== undefined) this.state.lastPrice = req.price;
    await this.writeState();
    return this.viewOf(ctx);
  }

  override view(_req: Empty, ctx: GrainContext): CartView {
    return this.viewOf(ctx);
  }

  private viewOf(ctx: GrainContext): CartView {
    const s = this.state;
    return {
      totalUnits: s.totalUnits,
      items: s.items,
      servedBy: ctx.cluster.id,
      totalUnitsType: typeof s.totalUnits,
      itemsType: typeof s.items,
      lastTokenClass: s.lastToken.constructor.name,
      note: { value: s.skus.join(',') },
    };
  }
}
