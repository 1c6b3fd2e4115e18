-- Tribal demo: an online store. 24 tables in four business domains (customers,
-- catalog, orders and fulfilment, support) plus system tables. Load it into an empty
-- database: psql -f scripts/demo/schema.sql

-- customers -----------------------------------------------------------------------
CREATE TABLE customers (
    id            bigserial PRIMARY KEY,
    email         varchar(320) NOT NULL UNIQUE,
    full_name     text NOT NULL,
    status        varchar(16) NOT NULL DEFAULT 'active',
    created_at    timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE customers IS 'People and companies who buy from the store';
COMMENT ON COLUMN customers.status IS 'active, suspended or closed';

CREATE TABLE customer_addresses (
    id            bigserial PRIMARY KEY,
    customer_id   bigint NOT NULL REFERENCES customers (id),
    kind          varchar(16) NOT NULL,
    line1         text NOT NULL,
    city          text NOT NULL,
    postal_code   varchar(16),
    country_code  char(2) NOT NULL
);
COMMENT ON COLUMN customer_addresses.kind IS 'billing or shipping';
CREATE INDEX customer_addresses_customer ON customer_addresses (customer_id);

CREATE TABLE customer_accounts (
    customer_id   bigint PRIMARY KEY REFERENCES customers (id),
    password_hash text NOT NULL,
    last_login_at timestamptz,
    loyalty_points integer NOT NULL DEFAULT 0
);

CREATE TABLE customer_segments (
    id            serial PRIMARY KEY,
    name          text NOT NULL UNIQUE,
    description   text
);

CREATE TABLE customer_segment_members (
    segment_id    integer NOT NULL REFERENCES customer_segments (id),
    customer_id   bigint NOT NULL REFERENCES customers (id),
    added_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (segment_id, customer_id)
);

-- catalog -------------------------------------------------------------------------
CREATE TABLE suppliers (
    id            serial PRIMARY KEY,
    name          text NOT NULL,
    country_code  char(2),
    contact_email text
);

CREATE TABLE categories (
    id            serial PRIMARY KEY,
    parent_id     integer REFERENCES categories (id),
    name          text NOT NULL,
    slug          text NOT NULL UNIQUE
);
COMMENT ON TABLE categories IS 'Product category tree (parent_id is null for top-level)';

CREATE TABLE products (
    id            bigserial PRIMARY KEY,
    sku           varchar(32) NOT NULL UNIQUE,
    name          text NOT NULL,
    category_id   integer NOT NULL REFERENCES categories (id),
    supplier_id   integer REFERENCES suppliers (id),
    price_cents   integer NOT NULL CHECK (price_cents >= 0),
    is_active     boolean NOT NULL DEFAULT true,
    created_at    timestamptz NOT NULL DEFAULT now()
);
COMMENT ON COLUMN products.price_cents IS 'List price in euro cents, VAT included';
CREATE INDEX products_category ON products (category_id);

CREATE TABLE product_images (
    id            bigserial PRIMARY KEY,
    product_id    bigint NOT NULL REFERENCES products (id),
    url           text NOT NULL,
    position      smallint NOT NULL DEFAULT 0
);

CREATE TABLE product_reviews (
    id            bigserial PRIMARY KEY,
    product_id    bigint NOT NULL REFERENCES products (id),
    customer_id   bigint NOT NULL REFERENCES customers (id),
    rating        smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
    body          text,
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE warehouses (
    id            serial PRIMARY KEY,
    code          varchar(8) NOT NULL UNIQUE,
    city          text NOT NULL
);

CREATE TABLE inventory_levels (
    product_id    bigint NOT NULL REFERENCES products (id),
    warehouse_id  integer NOT NULL REFERENCES warehouses (id),
    on_hand       integer NOT NULL DEFAULT 0,
    reserved      integer NOT NULL DEFAULT 0,
    PRIMARY KEY (product_id, warehouse_id)
);

-- orders and fulfilment -----------------------------------------------------------
CREATE TABLE orders (
    id            bigserial PRIMARY KEY,
    customer_id   bigint NOT NULL REFERENCES customers (id),
    shipping_address_id bigint REFERENCES customer_addresses (id),
    status        varchar(16) NOT NULL DEFAULT 'pending',
    total_cents   integer NOT NULL,
    placed_at     timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE orders IS 'One checkout by a customer';
COMMENT ON COLUMN orders.status IS 'pending, paid, shipped, delivered or cancelled';
CREATE INDEX orders_customer ON orders (customer_id);
CREATE INDEX orders_placed_at ON orders (placed_at);

CREATE TABLE order_items (
    order_id      bigint NOT NULL REFERENCES orders (id),
    line_no       smallint NOT NULL,
    product_id    bigint NOT NULL REFERENCES products (id),
    quantity      integer NOT NULL CHECK (quantity > 0),
    unit_price_cents integer NOT NULL,
    PRIMARY KEY (order_id, line_no)
);

CREATE TABLE order_status_history (
    id            bigserial PRIMARY KEY,
    order_id      bigint NOT NULL REFERENCES orders (id),
    status        varchar(16) NOT NULL,
    changed_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE payments (
    id            bigserial PRIMARY KEY,
    order_id      bigint NOT NULL REFERENCES orders (id),
    method        varchar(16) NOT NULL,
    amount_cents  integer NOT NULL,
    provider_ref  text,
    paid_at       timestamptz
);
COMMENT ON COLUMN payments.method IS 'card, paypal or invoice';

CREATE TABLE shipments (
    id            bigserial PRIMARY KEY,
    order_id      bigint NOT NULL REFERENCES orders (id),
    warehouse_id  integer REFERENCES warehouses (id),
    carrier       text NOT NULL,
    tracking_number text,
    shipped_at    timestamptz
);
CREATE UNIQUE INDEX shipments_tracking ON shipments (tracking_number);

CREATE TABLE returns (
    id            bigserial PRIMARY KEY,
    order_id      bigint NOT NULL REFERENCES orders (id),
    reason        text NOT NULL,
    refund_cents  integer,
    received_at   timestamptz
);

-- support -------------------------------------------------------------------------
CREATE TABLE support_agents (
    id            serial PRIMARY KEY,
    display_name  text NOT NULL,
    team          text NOT NULL
);

CREATE TABLE support_tickets (
    id            bigserial PRIMARY KEY,
    customer_id   bigint NOT NULL REFERENCES customers (id),
    order_id      bigint REFERENCES orders (id),
    assigned_agent_id integer REFERENCES support_agents (id),
    subject       text NOT NULL,
    priority      varchar(8) NOT NULL DEFAULT 'normal',
    status        varchar(16) NOT NULL DEFAULT 'open',
    opened_at     timestamptz NOT NULL DEFAULT now(),
    closed_at     timestamptz
);
COMMENT ON TABLE support_tickets IS 'Help-desk cases opened by customers';

CREATE TABLE support_ticket_messages (
    id            bigserial PRIMARY KEY,
    ticket_id     bigint NOT NULL REFERENCES support_tickets (id),
    agent_id      integer REFERENCES support_agents (id),
    body          text NOT NULL,
    sent_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE support_satisfaction_surveys (
    ticket_id     bigint PRIMARY KEY REFERENCES support_tickets (id),
    score         smallint NOT NULL CHECK (score BETWEEN 1 AND 5),
    comment_text  text
);

-- system --------------------------------------------------------------------------
CREATE TABLE audit_log (
    id            bigserial PRIMARY KEY,
    actor         text NOT NULL,
    action        text NOT NULL,
    entity        text NOT NULL,
    entity_id     text,
    occurred_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE audit_log IS 'Append-only trail of administrative actions';

CREATE TABLE schema_migrations (
    version       varchar(32) PRIMARY KEY,
    applied_at    timestamptz NOT NULL DEFAULT now()
);
