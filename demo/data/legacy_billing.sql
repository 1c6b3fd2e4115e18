-- Tribal eval: a legacy telecom billing database, the way tribal-knowledge schemas
-- look after twenty years: abbreviated names, few comments. 28 tables.
-- psql -f scripts/demo/legacy_billing.sql

CREATE TABLE rgn_cd (
    rgn_cd        char(3) PRIMARY KEY,
    rgn_nm        varchar(60) NOT NULL,
    tz_cd         varchar(32)
);

CREATE TABLE curr_cd (
    curr_cd       char(3) PRIMARY KEY,
    curr_nm       varchar(40) NOT NULL,
    dec_plcs      smallint NOT NULL DEFAULT 2
);

CREATE TABLE fx_rt (
    fx_rt_id      serial PRIMARY KEY,
    from_curr_cd  char(3) NOT NULL REFERENCES curr_cd (curr_cd),
    to_curr_cd    char(3) NOT NULL REFERENCES curr_cd (curr_cd),
    rt            numeric(18, 8) NOT NULL,
    eff_dt        date NOT NULL
);

CREATE TABLE cust_mstr (
    cust_id       bigserial PRIMARY KEY,
    cust_nm       varchar(120) NOT NULL,
    cust_typ_cd   char(1) NOT NULL,
    rgn_cd        char(3) REFERENCES rgn_cd (rgn_cd),
    crdt_lmt_amt  numeric(12, 2),
    stat_cd       char(1) NOT NULL DEFAULT 'A',
    crt_dt        date NOT NULL DEFAULT current_date
);
COMMENT ON COLUMN cust_mstr.cust_typ_cd IS 'R=residential B=business';

CREATE TABLE cust_addr (
    addr_id       bigserial PRIMARY KEY,
    cust_id       bigint NOT NULL REFERENCES cust_mstr (cust_id),
    addr_typ_cd   char(1) NOT NULL DEFAULT 'B',
    addr_ln1      varchar(120),
    cty_nm        varchar(60),
    pstl_cd       varchar(12),
    cntry_cd      char(2) NOT NULL DEFAULT 'US'
);

CREATE TABLE cust_cntct (
    cntct_id      bigserial PRIMARY KEY,
    cust_id       bigint NOT NULL REFERENCES cust_mstr (cust_id),
    cntct_nm      varchar(120),
    phn_nbr       varchar(24),
    eml_addr      varchar(254)
);

CREATE TABLE acct_mstr (
    acct_id       bigserial PRIMARY KEY,
    cust_id       bigint NOT NULL REFERENCES cust_mstr (cust_id),
    acct_nbr      varchar(20) NOT NULL UNIQUE,
    curr_cd       char(3) NOT NULL REFERENCES curr_cd (curr_cd),
    bill_cyc_cd   smallint,
    opn_dt        date,
    cls_dt        date
);

CREATE TABLE acct_bal (
    acct_id       bigint PRIMARY KEY REFERENCES acct_mstr (acct_id),
    cur_bal_amt   numeric(14, 2) NOT NULL DEFAULT 0,
    past_due_amt  numeric(14, 2) NOT NULL DEFAULT 0,
    lst_upd_ts    timestamp
);

CREATE TABLE bill_cyc (
    bill_cyc_cd   smallint PRIMARY KEY,
    cyc_desc      varchar(60),
    cls_day       smallint NOT NULL
);

CREATE TABLE prod_cat (
    prod_cd       varchar(12) PRIMARY KEY,
    prod_desc     varchar(200),
    prod_typ_cd   char(2),
    actv_flg      char(1) DEFAULT 'Y'
);

CREATE TABLE rt_pln (
    rt_pln_id     serial PRIMARY KEY,
    prod_cd       varchar(12) NOT NULL REFERENCES prod_cat (prod_cd),
    pln_nm        varchar(80) NOT NULL,
    mthly_fee_amt numeric(10, 2),
    eff_dt        date,
    exp_dt        date
);
COMMENT ON TABLE rt_pln IS 'tariffs';

CREATE TABLE rt_tier (
    tier_id       serial PRIMARY KEY,
    rt_pln_id     integer NOT NULL REFERENCES rt_pln (rt_pln_id),
    frm_qty       numeric(14, 3),
    to_qty        numeric(14, 3),
    unit_prc_amt  numeric(10, 5)
);

CREATE TABLE svc_agrmt (
    agrmt_id      bigserial PRIMARY KEY,
    acct_id       bigint NOT NULL REFERENCES acct_mstr (acct_id),
    rt_pln_id     integer NOT NULL REFERENCES rt_pln (rt_pln_id),
    strt_dt       date NOT NULL,
    end_dt        date
);

CREATE TABLE svc_loc (
    svc_loc_id    bigserial PRIMARY KEY,
    agrmt_id      bigint NOT NULL REFERENCES svc_agrmt (agrmt_id),
    addr_id       bigint REFERENCES cust_addr (addr_id),
    mtr_nbr       varchar(30)
);

CREATE TABLE usg_rec (
    usg_id        bigserial PRIMARY KEY,
    svc_loc_id    bigint NOT NULL REFERENCES svc_loc (svc_loc_id),
    usg_dt        date NOT NULL,
    usg_qty       numeric(14, 3) NOT NULL,
    uom_cd        varchar(6),
    est_flg       char(1) NOT NULL DEFAULT 'N'
);
COMMENT ON COLUMN usg_rec.est_flg IS 'Y=estimated read';

CREATE TABLE rtd_usg (
    rtd_usg_id    bigserial PRIMARY KEY,
    usg_id        bigint NOT NULL REFERENCES usg_rec (usg_id),
    tier_id       integer REFERENCES rt_tier (tier_id),
    chrg_amt      numeric(12, 4) NOT NULL
);

CREATE TABLE inv_hdr (
    inv_id        bigserial PRIMARY KEY,
    acct_id       bigint NOT NULL REFERENCES acct_mstr (acct_id),
    inv_nbr       varchar(20) NOT NULL UNIQUE,
    inv_dt        date NOT NULL,
    due_dt        date,
    tot_amt       numeric(14, 2) NOT NULL,
    tax_amt       numeric(14, 2),
    stat_cd       char(1)
);

CREATE TABLE inv_ln (
    inv_ln_id     bigserial PRIMARY KEY,
    inv_id        bigint NOT NULL REFERENCES inv_hdr (inv_id),
    ln_nbr        smallint NOT NULL,
    prod_cd       varchar(12) REFERENCES prod_cat (prod_cd),
    rtd_usg_id    bigint REFERENCES rtd_usg (rtd_usg_id),
    qty           numeric(14, 3),
    amt           numeric(14, 2) NOT NULL
);

CREATE TABLE tax_jur (
    tax_jur_cd    varchar(10) PRIMARY KEY,
    jur_nm        varchar(80),
    rgn_cd        char(3) REFERENCES rgn_cd (rgn_cd)
);

CREATE TABLE tax_rt (
    tax_rt_id     serial PRIMARY KEY,
    tax_jur_cd    varchar(10) NOT NULL REFERENCES tax_jur (tax_jur_cd),
    tax_pct       numeric(6, 4) NOT NULL,
    eff_dt        date
);

CREATE TABLE inv_tax (
    inv_id        bigint NOT NULL REFERENCES inv_hdr (inv_id),
    tax_rt_id     integer NOT NULL REFERENCES tax_rt (tax_rt_id),
    tax_amt       numeric(14, 2) NOT NULL,
    PRIMARY KEY (inv_id, tax_rt_id)
);

CREATE TABLE pmt_mthd (
    pmt_mthd_id   bigserial PRIMARY KEY,
    cust_id       bigint NOT NULL REFERENCES cust_mstr (cust_id),
    mthd_typ_cd   char(2) NOT NULL,
    card_lst4     char(4),
    bnk_rtng_nbr  varchar(12),
    exp_mo_yr     char(4)
);
COMMENT ON COLUMN pmt_mthd.mthd_typ_cd IS 'CC, DD, CK';

CREATE TABLE pmt_txn (
    pmt_id        bigserial PRIMARY KEY,
    acct_id       bigint NOT NULL REFERENCES acct_mstr (acct_id),
    pmt_mthd_id   bigint REFERENCES pmt_mthd (pmt_mthd_id),
    pmt_dt        date NOT NULL DEFAULT current_date,
    pmt_amt       numeric(14, 2) NOT NULL CHECK (pmt_amt > 0),
    ref_nbr       varchar(40) UNIQUE
);

CREATE TABLE pmt_alloc (
    alloc_id      bigserial PRIMARY KEY,
    pmt_id        bigint NOT NULL REFERENCES pmt_txn (pmt_id),
    inv_id        bigint NOT NULL REFERENCES inv_hdr (inv_id),
    alloc_amt     numeric(14, 2) NOT NULL
);

CREATE TABLE adj_txn (
    adj_id        bigserial PRIMARY KEY,
    acct_id       bigint NOT NULL REFERENCES acct_mstr (acct_id),
    inv_id        bigint REFERENCES inv_hdr (inv_id),
    adj_rsn_cd    varchar(6),
    adj_amt       numeric(14, 2) NOT NULL,
    apprv_usr_id  integer NOT NULL
);
COMMENT ON TABLE adj_txn IS 'credits/debits outside the bill run';

CREATE TABLE dunn_ltr (
    dunn_id       bigserial PRIMARY KEY,
    acct_id       bigint NOT NULL REFERENCES acct_mstr (acct_id),
    inv_id        bigint REFERENCES inv_hdr (inv_id),
    dunn_lvl      smallint NOT NULL CHECK (dunn_lvl BETWEEN 1 AND 3),
    snt_dt        date
);

CREATE TABLE coll_case (
    case_id       bigserial PRIMARY KEY,
    acct_id       bigint NOT NULL REFERENCES acct_mstr (acct_id),
    opn_dt        date NOT NULL,
    agcy_nm       varchar(80),
    owd_amt       numeric(14, 2)
);

CREATE TABLE usr_mstr (
    usr_id        serial PRIMARY KEY,
    usr_nm        varchar(40) NOT NULL UNIQUE,
    dept_cd       varchar(6),
    actv_flg      char(1) DEFAULT 'Y'
);

CREATE TABLE btch_job_log (
    job_id        bigserial PRIMARY KEY,
    job_nm        varchar(60) NOT NULL,
    strt_ts       timestamp,
    end_ts        timestamp,
    rc            smallint
);
